package io.latchkey.bench;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.servers.RedisTestServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Issue 7's contended targets, latchkey beside Redisson on one {@code redis-server} that it starts
 * itself: eight threads of one client on one lock, each cycle taking the lock, incrementing an
 * unsynchronised counter and letting go, as a user would. Two styles: {@code lock()}/{@code
 * unlock()} (watchdog lease) on both libraries, and an explicit lease ({@code acquire(wait,
 * lease)}/{@code release()} on latchkey, {@code tryLock(wait, lease)}/{@code unlock()} on
 * Redisson).
 *
 * <p>A round runs each of the four variants once, for a window after a settling time, in an order
 * that rotates from round to round, so that latchkey and Redisson meet the same machine load within
 * a round; the ratios are taken round by round. Per window: throughput (cycles per second), the
 * wait of each acquisition (from the call to its return; p50 and p99 over all threads), fairness
 * (the fewest grants of a thread divided by the most) and every command Redis ran per cycle ({@code
 * CONFIG RESETSTAT} then {@code INFO commandstats}, which counts the commands inside scripts too),
 * with the commands that clients sent apart. The counter is checked against the grants: a lock that
 * let two threads in would lose increments.
 *
 * <pre>
 * java -cp latchkey-bench/target/latchkey-benchmarks.jar io.latchkey.bench.ContendedRounds \
 *     [--rounds 3] [--settle 2] [--window 6] [--threads 8] [--warmup 0] [--paired 0] \
 *     [--decompose 0]
 * </pre>
 *
 * {@code --warmup S} first runs every variant once for S seconds, unmeasured: without it the first
 * measured window also pays the JIT compilation of its library (on a loaded machine that window is
 * the slowest of the run).
 *
 * <p>{@code --paired S} adds {@link PairedLatency} for S seconds (after S/4 s of warm-up) at the
 * end: the uncontended cycle of the floor, latchkey's backend alone, latchkey and Redisson,
 * interleaved.
 *
 * <p>{@code --decompose S} adds {@link CycleDecomposition} for S seconds at the very end:
 * latchkey's uncontended backend cycle taken apart against the floor (the floor, the floor with
 * latchkey's keys and arguments, latchkey's scripts sent by plain Lettuce, the backend), paired,
 * then the server's microseconds per cycle of each. {@code --rounds 0 --decompose 12} runs only
 * that.
 */
public final class ContendedRounds {
  private ContendedRounds() {}

  /** One of the four measured variants. */
  enum Variant {
    LATCHKEY_LOCK("Latchkey lock()"),
    REDISSON_LOCK("Redisson lock()"),
    LATCHKEY_ACQUIRE("Latchkey acquire(lease)"),
    REDISSON_ACQUIRE("Redisson tryLock(lease)");

    final String label;

    Variant(String label) {
      this.label = label;
    }

    boolean latchkey() {
      return this == LATCHKEY_LOCK || this == LATCHKEY_ACQUIRE;
    }
  }

  /** What one window measured, with Redis's command counts. */
  static final class Window {
    private final Variant variant;
    private final int round;
    private final ContendedWindow.Result result;
    private final long allCommands;
    private final long clientCommands;

    Window(
        Variant variant,
        int round,
        ContendedWindow.Result result,
        long allCommands,
        long clientCommands) {
      this.variant = variant;
      this.round = round;
      this.result = result;
      this.allCommands = allCommands;
      this.clientCommands = clientCommands;
    }

    Variant variant() {
      return variant;
    }

    int round() {
      return round;
    }

    String load() {
      return result.load();
    }

    double throughput() {
      return result.throughput();
    }

    double fairness() {
      return result.fairness();
    }

    double waitMillis(double q) {
      return result.waitMillis(q);
    }

    double allPerCycle() {
      return allCommands / (double) result.cycles();
    }

    double clientPerCycle() {
      return clientCommands / (double) result.cycles();
    }
  }

  /**
   * Runs the rounds and prints each window and a summary.
   *
   * @param args the options above
   * @throws Exception if a window fails (the counter check included)
   */
  public static void main(String[] args) throws Exception {
    int rounds = 3;
    int settle = 2;
    int window = 6;
    int threads = 8;
    int paired = 0;
    int warmup = 0;
    int decompose = 0;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--settle" -> settle = Integer.parseInt(args[++i]);
        case "--window" -> window = Integer.parseInt(args[++i]);
        case "--threads" -> threads = Integer.parseInt(args[++i]);
        case "--paired" -> paired = Integer.parseInt(args[++i]);
        case "--warmup" -> warmup = Integer.parseInt(args[++i]);
        case "--decompose" -> decompose = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    log("started " + Instant.now() + ", load " + RedisBenchmarks.loadAverage());
    List<Window> windows = new ArrayList<>();
    try (RedisTestServer server = RedisTestServer.start()) {
      log(
          "Redis "
              + server.info("server").getOrDefault("redis_version", "?")
              + " at "
              + server.uri());
      Variant[] variants = Variant.values();
      if (warmup > 0) {
        // One unmeasured window per variant first, so that no measured window pays the JIT.
        for (Variant variant : variants) {
          measure(server, variant, 0, threads, 0, warmup);
        }
        log("warmed up: " + warmup + " s per variant, load " + RedisBenchmarks.loadAverage());
      }
      for (int round = 1; round <= rounds; round++) {
        for (int i = 0; i < variants.length; i++) {
          Variant variant = variants[(round - 1 + i) % variants.length];
          Window measured = measure(server, variant, round, threads, settle, window);
          windows.add(measured);
          log(line(measured));
        }
      }
      summary(windows, rounds);
      if (paired > 0) {
        for (PairedLatency.Latencies latencies :
            PairedLatency.measure(
                server.uri(),
                Duration.ofSeconds(Math.max(1, paired / 4)),
                Duration.ofSeconds(paired))) {
          log(
              String.format(
                  Locale.ROOT,
                  "paired %-14s p50 %7.1f µs  p99 %8.1f µs  mean %7.1f µs (%d cycles)",
                  latencies.label(),
                  latencies.percentileMicros(0.5),
                  latencies.percentileMicros(0.99),
                  latencies.meanMicros(),
                  latencies.count()));
        }
      }
      if (decompose > 0) {
        CycleDecomposition.run(server, Duration.ofSeconds(decompose), ContendedRounds::log);
      }
    }
    log("finished " + Instant.now() + ", load " + RedisBenchmarks.loadAverage());
  }

  private static String line(Window w) {
    return String.format(
        Locale.ROOT,
        "round %d %-24s %7.0f cycles/s  wait p50 %7.2f ms p99 %8.2f ms  fairness %.2f"
            + "  commands/cycle %5.2f (sent %4.2f)  load %s",
        w.round(),
        w.variant().label,
        w.throughput(),
        w.waitMillis(0.5),
        w.waitMillis(0.99),
        w.fairness(),
        w.allPerCycle(),
        w.clientPerCycle(),
        w.load());
  }

  private static void summary(List<Window> windows, int rounds) {
    log("per round, latchkey against Redisson of the same round and style:");
    for (int round = 1; round <= rounds; round++) {
      for (Variant[] pair :
          new Variant[][] {
            {Variant.LATCHKEY_LOCK, Variant.REDISSON_LOCK},
            {Variant.LATCHKEY_ACQUIRE, Variant.REDISSON_ACQUIRE}
          }) {
        Window ours = find(windows, round, pair[0]);
        Window theirs = find(windows, round, pair[1]);
        log(
            String.format(
                Locale.ROOT,
                "round %d %-24s throughput %.2f×  p99 wait %.2f×  fairness %.2f vs %.2f"
                    + "  commands/cycle %.2f vs %.2f (%.2f×)",
                round,
                pair[0].label,
                ours.throughput() / theirs.throughput(),
                ours.waitMillis(0.99) / theirs.waitMillis(0.99),
                ours.fairness(),
                theirs.fairness(),
                ours.allPerCycle(),
                theirs.allPerCycle(),
                ours.allPerCycle() / theirs.allPerCycle()));
      }
    }
  }

  private static Window find(List<Window> windows, int round, Variant variant) {
    return windows.stream()
        .filter(w -> w.round() == round && w.variant() == variant)
        .findFirst()
        .orElseThrow();
  }

  private static Window measure(
      RedisTestServer server, Variant variant, int round, int threadCount, int settle, int window)
      throws Exception {
    String name = "contended:" + variant.name() + ":" + System.nanoTime();
    Latchkey latchkey = null;
    RedissonClient redisson = null;
    try {
      List<Locker> lockers = new ArrayList<>();
      if (variant.latchkey()) {
        latchkey =
            Latchkey.connect(
                server.uri(),
                LatchkeyOptions.builder()
                    .leaseTime(LockClients.DEFAULT_WATCHDOG_LEASE)
                    .closeOnShutdown(false)
                    .build());
        DistributedLock lock = latchkey.lock(name);
        for (int t = 0; t < threadCount; t++) {
          lockers.add(
              variant == Variant.LATCHKEY_LOCK
                  ? Locker.lockUnlock(lock)
                  : Locker.acquireRelease(lock));
        }
      } else {
        Config config = new Config();
        config.setLockWatchdogTimeout(LockClients.DEFAULT_WATCHDOG_LEASE.toMillis());
        config.useSingleServer().setAddress(server.uri());
        redisson = Redisson.create(config);
        RLock lock = redisson.getLock(name);
        for (int t = 0; t < threadCount; t++) {
          lockers.add(
              variant == Variant.REDISSON_LOCK
                  ? Locker.lockUnlock(lock)
                  : Locker.tryLockLease(lock));
        }
      }
      return run(server, variant, round, lockers, settle, window);
    } finally {
      if (latchkey != null) {
        latchkey.close();
      }
      if (redisson != null) {
        redisson.shutdown();
      }
    }
  }

  private static Window run(
      RedisTestServer server,
      Variant variant,
      int round,
      List<Locker> lockers,
      int settle,
      int window)
      throws Exception {
    AtomicReference<@Nullable CommandStats> stats = new AtomicReference<>();
    ContendedWindow.Result result =
        ContendedWindow.measure(
            variant.label,
            lockers,
            1,
            Duration.ofSeconds(settle),
            Duration.ofSeconds(window),
            new ContendedWindow.Probe() {
              @Override
              public void start() {
                server.command("CONFIG", "RESETSTAT");
              }

              @Override
              public void stop() {
                stats.set(CommandStats.read(server));
              }
            });
    CommandStats counted = Objects.requireNonNull(stats.get());
    return new Window(
        variant, round, result, counted.totalCalls(), counted.clientOnly().totalCalls());
  }

  private static void log(String line) {
    System.out.println("[contended] " + line);
    System.out.flush();
  }
}
