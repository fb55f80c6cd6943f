package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.HolderInfo;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LockInfo;
import io.latchkey.spi.LockRequest;
import io.latchkey.testkit.process.WorkerJvm;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 8, item 16 with a real process pause: a worker JVM at the head of a fair lock's wait queue
 * is stopped with SIGSTOP. The live waiter behind it gets the lock once it is free, within the
 * documented bound (one hand-off plus one re-check, ADR 0003), not after the stopped head's place
 * runs out; and when the stopped worker goes on (SIGCONT), it never holds the lock beside the live
 * holder: it queues again and gets the lock only after the live holder released it.
 */
class RedisStoppedQueueHeadTest {
  @RegisterExtension static final RedisServerExtension REDIS = new RedisServerExtension();

  private static final LatchkeyOptions OPTIONS =
      LatchkeyOptions.builder().closeOnShutdown(false).build();

  /** A live waiter behind a paused head gets a free lock within this (ADR 0003's amendment). */
  private static final Duration BOUND =
      Duration.ofMillis(LockRequest.DEFAULT_HANDOFF_MILLIS)
          .plus(min(OPTIONS.recheckInterval(), OPTIONS.queueKeepAlive().dividedBy(3)));

  /** What a loaded machine may add to the bound; still well below the head's place (5 s). */
  private static final Duration SLACK = Duration.ofSeconds(1);

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  private static LockInfo inspect(Latchkey client, String name) {
    return client.admin().inspect(name).orElseThrow();
  }

  @Test
  void aStoppedQueueHeadNeitherKeepsTheLockFromOthersNorHoldsItBesideThemWhenItGoesOn()
      throws Exception {
    String uri = REDIS.server().uri();
    Latchkey holder = REDIS.closeAfterTest(Latchkey.connect(uri, OPTIONS));
    Latchkey live = REDIS.closeAfterTest(Latchkey.connect(uri, OPTIONS));
    String name = "stopped-head/" + System.nanoTime();
    Lease held = holder.fairLock(name).acquire(Duration.ZERO);

    WorkerJvm head =
        REDIS.closeAfterTest(
            WorkerJvm.start("uri=" + uri, "mode=hold", "lock=" + name, "fair=true"));
    head.awaitLine("READY", Duration.ofSeconds(60));
    await().atMost(Duration.ofSeconds(30)).until(() -> inspect(holder, name).queuedWaiters() == 1);
    CompletableFuture<Lease> liveGrant =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return live.fairLock(name).acquire(Duration.ofSeconds(30));
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
              }
            });
    await().atMost(Duration.ofSeconds(30)).until(() -> inspect(holder, name).queuedWaiters() == 2);

    head.pause();
    long released = System.nanoTime();
    held.release();
    Lease liveLease = liveGrant.get(30, TimeUnit.SECONDS);
    Duration waited = Duration.ofNanos(System.nanoTime() - released);
    System.out.printf(
        "stopped queue head: the live waiter got the free lock after %d ms (bound %d ms)%n",
        waited.toMillis(), BOUND.toMillis());
    assertThat(waited).isLessThanOrEqualTo(BOUND.plus(SLACK));
    assertThat(head.printed("ACQUIRED")).isFalse();

    // The stopped worker goes on while the live waiter holds the lock: it must queue, not hold.
    head.resume();
    await()
        .during(BOUND.multipliedBy(2))
        .atMost(BOUND.multipliedBy(4))
        .until(
            () -> {
              List<HolderInfo> holders = inspect(holder, name).holders();
              return !head.printed("ACQUIRED")
                  && holders.size() == 1
                  && holders.get(0).fencingToken() == liveLease.fencingToken();
            });

    liveLease.release();
    String acquired = head.awaitLine("ACQUIRED", Duration.ofSeconds(30));
    long headToken = Long.parseLong(acquired.split(" ", -1)[0]);
    assertThat(headToken).isGreaterThan(liveLease.fencingToken());
    assertThat(inspect(holder, name).holders())
        .singleElement()
        .satisfies(info -> assertThat(info.fencingToken()).isEqualTo(headToken));
  }
}
