package io.latchkey.bench;

import io.latchkey.bench.LockClients.Library;
import io.latchkey.servers.RedisTestServer;
import java.time.Duration;
import java.util.Map;

/**
 * Redis commands per acquire+release cycle under contention. A {@link LockWorkload} runs a while to
 * settle (clients connected, subscriptions made, code compiled); then {@code CONFIG RESETSTAT}, a
 * counted window, every thread finishes the cycle it is in, and {@code INFO commandstats}.
 *
 * <p>{@code INFO commandstats} counts the commands that scripts run too, and cannot tell a DEL or a
 * PUBLISH that a client sent from one a script ran. So a {@link MonitorTally} watches the same
 * window and counts what clients sent, by the source MONITOR gives each command. MONITOR costs
 * Redis some time per command, which slows the cycles down a little; the counts per cycle are what
 * this class measures, not the speed (that is {@link RedisLockBenchmark}'s job).
 *
 * <p>Every command counted belongs to a cycle that completed in the window, except those of the
 * cycles in flight when it opened (at most one per thread, against thousands measured). Background
 * work of the clients in the window counts too: latchkey's presence refresh (one EVALSHA per client
 * per 10 s), Redisson's connection pings.
 */
final class ContentionCounts {
  private ContentionCounts() {}

  /** Which clients contend: {@code clients} clients with {@code threadsPerClient} threads each. */
  record Shape(Library library, int clients, int threadsPerClient) {
    /** Every thread but the holder waits. */
    int threads() {
      return clients * threadsPerClient;
    }

    String label() {
      return library.label() + " " + clients + "×" + threadsPerClient;
    }
  }

  /**
   * What a window counted.
   *
   * @param stats every command Redis executed ({@code INFO commandstats})
   * @param sent the commands clients sent ({@code MONITOR})
   * @param inScripts the commands scripts ran ({@code MONITOR})
   */
  record Counted(
      Shape shape,
      Quiet quiet,
      long cycles,
      CommandStats stats,
      Map<String, Long> sent,
      Map<String, Long> inScripts) {
    /** Round trips: the commands clients sent, per cycle. */
    double sentPerCycle() {
      return total(sent) / (double) cycles;
    }

    /** Every command Redis executed, including those inside scripts, per cycle. */
    double allPerCycle() {
      return stats.totalCalls() / (double) cycles;
    }

    /** What MONITOR saw against what commandstats counted, as a fraction (1 when they agree). */
    double monitorCoverage() {
      return (total(sent) + total(inScripts)) / (double) Math.max(1, stats.totalCalls());
    }

    private static long total(Map<String, Long> counts) {
      return counts.values().stream().mapToLong(Long::longValue).sum();
    }
  }

  /**
   * What the quiet window measured.
   *
   * @param stats every command Redis executed ({@code INFO commandstats})
   */
  record Quiet(long cycles, double seconds, CommandStats stats) {
    double cyclesPerSecond() {
      return cycles / seconds;
    }

    /** The server time of one script call, on average (µs): how long Redis runs it. */
    double usecPerScriptCall() {
      long calls = stats.calls("evalsha") + stats.calls("eval");
      return calls == 0 ? 0 : (stats.usec("evalsha") + stats.usec("eval")) / (double) calls;
    }

    /** The commands only a client can send (EVALSHA, SUBSCRIBE, ...), per cycle. */
    double clientOnlyPerCycle() {
      return stats.clientOnly().totalCalls() / (double) cycles;
    }
  }

  /**
   * Counts the commands of one shape.
   *
   * @param server the server, which nobody else uses meanwhile
   * @param shape who contends
   * @param settle how long to run before counting
   * @param window how long each of the two windows lasts
   */
  static Counted count(RedisTestServer server, Shape shape, Duration settle, Duration window)
      throws InterruptedException {
    String name = "counts:" + shape.library().label() + ":" + System.nanoTime();
    try (LockWorkload workload =
        new LockWorkload(
            server.uri(), shape.library(), shape.clients(), shape.threadsPerClient(), name)) {
      Thread.sleep(settle.toMillis());
      server.command("CONFIG", "RESETSTAT");
      long quietStart = System.nanoTime();
      long quietBefore = workload.cycles();
      Thread.sleep(window.toMillis());
      // The threads keep running: off by the cycles in flight at either end, one per thread at
      // most.
      CommandStats quietStats = CommandStats.read(server);
      Quiet quiet =
          new Quiet(
              workload.cycles() - quietBefore, (System.nanoTime() - quietStart) / 1e9, quietStats);
      try (MonitorTally tally = MonitorTally.start(server.host(), server.port())) {
        server.command("CONFIG", "RESETSTAT");
        server.command("ECHO", MonitorTally.START_MARK);
        long before = workload.cycles();
        Thread.sleep(window.toMillis());
        workload.stop();
        long cycles = workload.cycles() - before;
        CommandStats stats = CommandStats.read(server);
        server.command("ECHO", MonitorTally.END_MARK);
        tally.awaitEnd();
        if (cycles == 0 || quiet.cycles() == 0) {
          throw new IllegalStateException(shape.label() + " completed no cycle in " + window);
        }
        return new Counted(shape, quiet, cycles, stats, tally.fromClients(), tally.fromScripts());
      }
    }
  }
}
