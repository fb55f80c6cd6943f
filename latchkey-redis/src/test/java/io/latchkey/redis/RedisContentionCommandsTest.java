package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.servers.RedisTestServer;
import io.latchkey.testkit.ContendedCycles;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Redis commands per acquire+release cycle when many waiters contend for one lock, counted by the
 * server (INFO commandstats), not timed: a release wakes only the head of the wait queue, so the
 * count must not grow with the number of waiters.
 */
class RedisContentionCommandsTest {
  private static final int CYCLES_PER_THREAD = 150;

  private static @Nullable RedisTestServer server;

  @BeforeAll
  static void startRedis() {
    server = RedisTestServer.start();
  }

  @AfterAll
  static void stopRedis() {
    if (server != null) {
      server.close();
    }
  }

  private static RedisTestServer redis() {
    if (server == null) {
      throw new IllegalStateException("redis-server has not been started");
    }
    return server;
  }

  /**
   * Without hand-overs a contended cycle is three script calls (a waiter queues, the woken head is
   * granted, the holder releases), four when a wake-up races a waiter's joining. A release that
   * hands the lock to a waiter of its own client grants it in the same call, and a waiter that
   * finds the lock held by its own client waits for that hand-over without asking Redis: one, with
   * every waiter in one client (two before waiters waited locally, three before the hand-over).
   */
  @ParameterizedTest(name = "{0} clients x {1} threads")
  @CsvSource({"8, 1, 4.5", "4, 4, 3.0", "1, 8, 1.5", "8, 4, 3.0"})
  void contendedCyclesCostAFixedNumberOfScriptCalls(
      int clients, int threadsPerClient, double maxScriptsPerCycle) throws Exception {
    String name = "contended/" + clients + "x" + threadsPerClient;
    LatchkeyOptions options = ContendedCycles.COUNTING_OPTIONS;
    List<Latchkey> opened = new ArrayList<>();
    try {
      List<DistributedLock> locks = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        Latchkey client = Latchkey.connect(redis().uri(), options);
        opened.add(client);
        DistributedLock lock = client.lock(name);
        lock.lock();
        lock.unlock();
        locks.add(lock);
      }
      redis().command("CONFIG", "RESETSTAT");

      ContendedCycles.run(locks, threadsPerClient, CYCLES_PER_THREAD, Duration.ofMinutes(2));

      Map<String, String> stats = redis().info("commandstats");
      long cycles = (long) CYCLES_PER_THREAD * clients * threadsPerClient;
      double scripts =
          (calls(stats, "cmdstat_evalsha") + calls(stats, "cmdstat_eval")) / (double) cycles;
      double commands =
          stats.entrySet().stream()
                  .filter(e -> e.getKey().startsWith("cmdstat_"))
                  .mapToLong(e -> calls(stats, e.getKey()))
                  .sum()
              / (double) cycles;
      System.out.printf(
          "%d clients x %d threads: %.2f script calls, %.2f commands per acquire+release%n",
          clients, threadsPerClient, scripts, commands);
      assertThat(scripts).as("script calls per cycle").isLessThanOrEqualTo(maxScriptsPerCycle);
    } finally {
      for (Latchkey client : opened) {
        client.close();
      }
    }
  }

  private static long calls(Map<String, String> stats, String command) {
    String entry = stats.get(command);
    if (entry == null) {
      return 0;
    }
    return Long.parseLong(entry.substring("calls=".length(), entry.indexOf(',')));
  }
}
