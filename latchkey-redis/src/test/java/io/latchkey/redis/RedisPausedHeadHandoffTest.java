package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LockMode;
import io.latchkey.servers.RedisTestServer;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The measurement of docs/benchmarks.md ("Hand-off past a paused queue head"): how long a free lock
 * waits for a live waiter while the queue head ahead of it is paused, with a barging client taking
 * the lock whenever it can. The paused head queued as the engine does with default options (a 5 s
 * place) and then sends nothing and reads no wake-up, as a SIGSTOPped process. The live waiter, the
 * barger and the holder are clients with default options. Prints the longest and mean time from the
 * release to the live waiter's grant over the rounds, and the barger's grants meanwhile.
 *
 * <p>Run: {@code mvn -B -pl latchkey-core,latchkey-servers,latchkey-testkit,latchkey-redis verify
 * -Psoak -Dtest=RedisPausedHeadHandoffTest -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=none}
 */
@Tag("slow")
class RedisPausedHeadHandoffTest {
  private static final int ROUNDS = 5;

  @Test
  void liveWaiterGetsAFreeLockPastAPausedHead() throws Exception {
    LatchkeyOptions options = LatchkeyOptions.builder().closeOnShutdown(false).build();
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try (RedisTestServer redis = RedisTestServer.start();
        Latchkey holderClient = Latchkey.connect(redis.uri(), options);
        Latchkey liveClient = Latchkey.connect(redis.uri(), options);
        Latchkey bargerClient = Latchkey.connect(redis.uri(), options);
        LatchkeyBackend pausedHead =
            RedisBackend.open(
                URI.create(redis.uri()),
                new BackendContext("paused-head", Duration.ofSeconds(2), Duration.ofSeconds(30)))) {
      long longest = 0;
      long total = 0;
      int bargerGrants = 0;
      for (int round = 0; round < ROUNDS; round++) {
        String name = "paused-head/" + round;
        Lease held = holderClient.lock(name).acquire(Duration.ZERO, Duration.ofMinutes(1));
        // Queued like an engine waiter with default options, then paused: it never comes again.
        LockRequest head =
            new LockRequest(name, "paused-head-owner", LockMode.EXCLUSIVE, 30_000, false, 5_000);
        assertThat(pausedHead.locks().tryAcquire(head).toCompletableFuture().join().isGranted())
            .isFalse();
        DistributedLock liveLock = liveClient.lock(name);
        CompletableFuture<Long> live =
            CompletableFuture.supplyAsync(
                () -> {
                  try {
                    Lease lease = liveLock.acquire(Duration.ofSeconds(30));
                    long at = System.nanoTime();
                    lease.release();
                    return at;
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                  }
                },
                threads);
        while (holderClient.admin().inspect(name).orElseThrow().queuedWaiters() < 2) {
          Thread.onSpinWait();
        }
        DistributedLock bargerLock = bargerClient.lock(name);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger grants = new AtomicInteger();
        CompletableFuture<Void> barger =
            CompletableFuture.runAsync(
                () -> {
                  while (!stop.get()) {
                    if (bargerLock.tryLock()) {
                      grants.incrementAndGet();
                      bargerLock.unlock();
                    }
                  }
                },
                threads);
        long released = System.nanoTime();
        held.release();
        long granted = live.get(1, TimeUnit.MINUTES);
        stop.set(true);
        barger.get(1, TimeUnit.MINUTES);
        long millis = TimeUnit.NANOSECONDS.toMillis(granted - released);
        longest = Math.max(longest, millis);
        total += millis;
        bargerGrants += grants.get();
        pausedHead.locks().leaveQueue(name, "paused-head-owner").toCompletableFuture().join();
      }
      System.out.printf(
          "paused head: live waiter granted after at most %d ms (mean %d ms) over %d rounds;"
              + " the barger took %d grants meanwhile%n",
          longest, total / ROUNDS, ROUNDS, bargerGrants);
    } finally {
      threads.shutdownNow();
    }
  }
}
