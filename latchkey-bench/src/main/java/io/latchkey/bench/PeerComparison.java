package io.latchkey.bench;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;

/**
 * A side-by-side comparison of lock libraries on the same servers in one JVM, for the backends
 * whose peers are not Redisson (quorum, ZooKeeper, JDBC; the Redis comparison has its own, {@link
 * RedisBenchmarks}). Three steps:
 *
 * <ol>
 *   <li><b>Uncontended, paired</b> ({@link PairedLatency}): one thread runs one acquire+release
 *       cycle of each library in turn, so that every library meets the same machine load.
 *   <li><b>Server counts per uncontended cycle</b> (writes, requests), where the server can count
 *       them ({@link ServerCounter}): each library alone, a fixed number of cycles.
 *   <li><b>Contended rounds</b> ({@link ContendedWindow}), for each shape (eight threads on one
 *       lock; eight threads on a lock each): a round runs each library once, for a window after a
 *       settling time, in an order that rotates from round to round, so that ratios can be taken
 *       within a round. All threads of a library share one client, as an application's threads
 *       share one per process.
 * </ol>
 *
 * It prints Markdown tables and writes them to a file.
 */
final class PeerComparison {
  private static final int COUNTED_CYCLES = 200;

  private PeerComparison() {}

  /** One library under comparison, with its client open. */
  interface Peer extends AutoCloseable {
    /** A short name for the tables. */
    String label();

    /**
     * A locker for one thread on one lock.
     *
     * @param name the lock's name, the same for every thread of a shared lock
     */
    Locker locker(String name) throws Exception;

    @Override
    void close();

    /**
     * A peer from its parts.
     *
     * @param label the name for the tables
     * @param lockers makes a thread's locker for a lock name
     * @param close closes the client
     */
    static Peer of(String label, LockerFactory lockers, Runnable close) {
      return new Peer() {
        @Override
        public String label() {
          return label;
        }

        @Override
        public Locker locker(String name) throws Exception {
          return lockers.locker(name);
        }

        @Override
        public void close() {
          close.run();
        }
      };
    }
  }

  /** Makes a thread's locker for a lock name. */
  @FunctionalInterface
  interface LockerFactory {
    Locker locker(String name) throws Exception;
  }

  /**
   * Counts something a server did, e.g. ZooKeeper's writes (transaction ids) or requests received.
   * Counters are read in their list's order, at both ends of a measured interval.
   */
  interface ServerCounter {
    /** What is counted, for the tables' headings. */
    String unit();

    /** A count that only grows; the difference between two reads is what happened between. */
    long read() throws Exception;

    /** How many of the counted things the counters' own reads add to one interval. */
    long overhead();
  }

  /** How many threads on how many locks. */
  record Shape(String title, int threads, boolean lockEach) {
    int locks() {
      return lockEach ? threads : 1;
    }
  }

  /** The contended windows of one library in one shape. */
  record Contended(Peer peer, int round, ContendedWindow.Result result, List<Double> perCycle) {}

  /** What one comparison measured. */
  static final class Results {
    final List<PairedLatency.Latencies> paired;
    final List<String> units;
    final Map<String, List<Double>> uncontendedCounts;
    final Map<Shape, List<Contended>> contended;

    Results(
        List<PairedLatency.Latencies> paired,
        List<String> units,
        Map<String, List<Double>> uncontendedCounts,
        Map<Shape, List<Contended>> contended) {
      this.paired = paired;
      this.units = units;
      this.uncontendedCounts = uncontendedCounts;
      this.contended = contended;
    }

    /** The paired latencies of a library. */
    PairedLatency.Latencies paired(String label) {
      return paired.stream().filter(l -> l.label().equals(label)).findFirst().orElseThrow();
    }

    /** A library's window of a round in a shape. */
    ContendedWindow.Result window(Shape shape, String label, int round) {
      return contended.getOrDefault(shape, List.of()).stream()
          .filter(c -> c.peer().label().equals(label) && c.round() == round)
          .findFirst()
          .orElseThrow()
          .result();
    }
  }

  /** The command line shared by the comparisons. */
  static final class Settings {
    Path out;
    boolean quick;
    int rounds = 2;
    int threads = 8;
    Duration settle = Duration.ofSeconds(2);
    Duration window = Duration.ofSeconds(5);
    Duration pairedWarmup = Duration.ofSeconds(3);
    Duration pairedWindow = Duration.ofSeconds(12);

    private Settings(Path out) {
      this.out = out;
    }

    static final String USAGE =
        "--out DIR, --quick, --rounds N, --threads N, --settle S, --window S, --paired S";

    static Settings parse(String[] args, String name) {
      Settings settings = new Settings(Paths.get("latchkey-bench", "target", name));
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--out" -> settings.out = Paths.get(value(args, ++i));
          case "--quick" -> {
            settings.quick = true;
            settings.rounds = 1;
            settings.settle = Duration.ofSeconds(1);
            settings.window = Duration.ofSeconds(1);
            settings.pairedWarmup = Duration.ofSeconds(1);
            settings.pairedWindow = Duration.ofSeconds(2);
          }
          case "--rounds" -> settings.rounds = Integer.parseInt(value(args, ++i));
          case "--threads" -> settings.threads = Integer.parseInt(value(args, ++i));
          case "--settle" -> settings.settle = Duration.ofSeconds(Long.parseLong(value(args, ++i)));
          case "--window" -> settings.window = Duration.ofSeconds(Long.parseLong(value(args, ++i)));
          case "--paired" -> {
            settings.pairedWindow = Duration.ofSeconds(Long.parseLong(value(args, ++i)));
            settings.pairedWarmup =
                Duration.ofSeconds(Math.max(1, settings.pairedWindow.toSeconds() / 4));
          }
          default ->
              throw new IllegalArgumentException(
                  "unknown option " + args[i] + "; expected " + USAGE);
        }
      }
      return settings;
    }

    private static String value(String[] args, int i) {
      if (i >= args.length) {
        throw new IllegalArgumentException(args[i - 1] + " needs a value");
      }
      return args[i];
    }
  }

  /**
   * Runs the three steps.
   *
   * @param tag a prefix of the log lines and lock names
   * @param peers the libraries, the reference of the ratios first
   * @param shapes the contended shapes
   * @param settings durations
   * @param counters what the server can count (none where it cannot)
   */
  static Results run(
      String tag,
      List<Peer> peers,
      List<Shape> shapes,
      Settings settings,
      List<ServerCounter> counters)
      throws Exception {
    Consumer<String> log = line -> log(tag, line);
    List<PairedLatency.Variant> variants = new ArrayList<>();
    for (Peer peer : peers) {
      variants.add(
          new PairedLatency.Variant(
              peer.label(), peer.locker(tag + "-paired-" + System.nanoTime()).cycle()));
    }
    List<PairedLatency.Latencies> paired =
        PairedLatency.measure(variants, settings.pairedWarmup, settings.pairedWindow);
    for (PairedLatency.Latencies l : paired) {
      log.accept(
          String.format(
              Locale.ROOT,
              "paired %-24s p50 %8.1f µs  p99 %8.1f µs  mean %8.1f µs (%d cycles)",
              l.label(),
              l.percentileMicros(0.5),
              l.percentileMicros(0.99),
              l.meanMicros(),
              l.count()));
    }
    Map<String, List<Double>> uncontendedCounts = new LinkedHashMap<>();
    if (!counters.isEmpty()) {
      for (Peer peer : peers) {
        LockClients.Cycle cycle = peer.locker(tag + "-counted-" + System.nanoTime()).cycle();
        cycle.run();
        long[] before = read(counters);
        for (int i = 0; i < COUNTED_CYCLES; i++) {
          cycle.run();
        }
        double[] perCycle = perCycle(counters, before, read(counters), COUNTED_CYCLES);
        uncontendedCounts.put(peer.label(), boxed(perCycle));
        log.accept(
            String.format(
                Locale.ROOT,
                "per uncontended cycle, %s: %s",
                peer.label(),
                describe(counters, perCycle)));
      }
    }
    Map<Shape, List<Contended>> contended = new LinkedHashMap<>();
    for (Shape shape : shapes) {
      List<Contended> windows = new ArrayList<>();
      contended.put(shape, windows);
      for (int round = 1; round <= settings.rounds; round++) {
        for (int i = 0; i < peers.size(); i++) {
          Peer peer = peers.get((round - 1 + i) % peers.size());
          windows.add(contend(tag, peer, shape, round, settings, counters, log));
        }
      }
    }
    return new Results(
        paired, counters.stream().map(ServerCounter::unit).toList(), uncontendedCounts, contended);
  }

  private static long[] read(List<ServerCounter> counters) throws Exception {
    long[] counts = new long[counters.size()];
    for (int i = 0; i < counts.length; i++) {
      counts[i] = counters.get(i).read();
    }
    return counts;
  }

  private static double[] perCycle(
      List<ServerCounter> counters, long[] before, long[] after, long cycles) {
    double[] perCycle = new double[counters.size()];
    for (int i = 0; i < perCycle.length; i++) {
      perCycle[i] = (after[i] - before[i] - counters.get(i).overhead()) / (double) cycles;
    }
    return perCycle;
  }

  private static String describe(List<ServerCounter> counters, double[] perCycle) {
    List<String> parts = new ArrayList<>();
    for (int i = 0; i < perCycle.length; i++) {
      parts.add(String.format(Locale.ROOT, "%s %.2f", counters.get(i).unit(), perCycle[i]));
    }
    return String.join(", ", parts);
  }

  private static Contended contend(
      String tag,
      Peer peer,
      Shape shape,
      int round,
      Settings settings,
      List<ServerCounter> counters,
      Consumer<String> log)
      throws Exception {
    String name = tag + "-contended-" + System.nanoTime();
    List<Locker> lockers = new ArrayList<>();
    for (int t = 0; t < shape.threads(); t++) {
      lockers.add(peer.locker(shape.lockEach() ? name + "-" + t : name));
    }
    long[][] counted = new long[2][];
    ContendedWindow.Result result =
        ContendedWindow.measure(
            peer.label() + ", " + shape.title(),
            lockers,
            shape.locks(),
            settings.settle,
            settings.window,
            counters.isEmpty()
                ? ContendedWindow.NO_PROBE
                : new ContendedWindow.Probe() {
                  @Override
                  public void start() throws Exception {
                    counted[0] = read(counters);
                  }

                  @Override
                  public void stop() throws Exception {
                    counted[1] = read(counters);
                  }
                });
    double[] perCycle =
        counters.isEmpty()
            ? new double[0]
            : perCycle(counters, counted[0], counted[1], result.cycles());
    Contended measured = new Contended(peer, round, result, boxed(perCycle));
    log.accept(
        String.format(
            Locale.ROOT,
            "%s, round %d, %-24s %8.0f cycles/s  wait p50 %7.2f ms p99 %8.2f ms"
                + "  hand-off p99 %7.2f ms  fairness %.2f  JIT %.2f s%s  load %s",
            shape.title(),
            round,
            peer.label(),
            result.throughput(),
            result.waitMillis(0.5),
            result.waitMillis(0.99),
            result.handoffMillis(0.99),
            result.fairness(),
            result.compileMillis() / 1e3,
            counters.isEmpty() ? "" : "  per cycle: " + describe(counters, perCycle),
            result.load()));
    return measured;
  }

  /**
   * Renders the tables as Markdown, ratios against the first library.
   *
   * @param results what {@link #run} measured
   */
  static String tables(Results results) {
    StringBuilder out = new StringBuilder();
    PairedLatency.Latencies base = results.paired.get(0);
    out.append("#### Uncontended, paired: one thread, one cycle of each library in turn\n\n")
        .append("| library | cycles | p50 µs | p99 µs | mean µs | p50 vs ")
        .append(base.label())
        .append(" | mean vs ")
        .append(base.label())
        .append(" |")
        .append(countHeadings(results))
        .append("\n|---|---:|---:|---:|---:|---:|---:|")
        .append("---:|".repeat(results.units.size()))
        .append('\n');
    for (PairedLatency.Latencies l : results.paired) {
      out.append(
          String.format(
              Locale.ROOT,
              "| %s | %,d | %.1f | %.1f | %.1f | %.2f× | %.2f× |",
              l.label(),
              l.count(),
              l.percentileMicros(0.5),
              l.percentileMicros(0.99),
              l.meanMicros(),
              l.percentileMicros(0.5) / base.percentileMicros(0.5),
              l.meanMicros() / base.meanMicros()));
      out.append(counts(results.uncontendedCounts.getOrDefault(l.label(), List.of())));
      out.append('\n');
    }
    for (Map.Entry<Shape, List<Contended>> entry : results.contended.entrySet()) {
      out.append("\n#### ")
          .append(entry.getKey().title())
          .append(": one row per window\n\n")
          .append(
              "| library | round | cycles/s | vs first, same round | wait p50 ms | wait p99 ms |"
                  + " hand-off p50 ms | hand-off p99 ms | fairness | JIT compile s |")
          .append(countHeadings(results))
          .append(" load (1, 5, 15 min) |\n")
          .append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
          .append("---:|".repeat(results.units.size()))
          .append("---|\n");
      String first = results.paired.get(0).label();
      for (Contended c : entry.getValue()) {
        ContendedWindow.Result r = c.result();
        double reference = results.window(entry.getKey(), first, c.round()).throughput();
        out.append(
            String.format(
                Locale.ROOT,
                "| %s | %d | %,.0f | %.2f× | %.2f | %.2f | %s | %s | %.2f | %.2f |",
                c.peer().label(),
                c.round(),
                r.throughput(),
                r.throughput() / reference,
                r.waitMillis(0.5),
                r.waitMillis(0.99),
                millis(r.handoffMillis(0.5)),
                millis(r.handoffMillis(0.99)),
                r.fairness(),
                r.compileMillis() / 1e3));
        out.append(counts(c.perCycle()));
        out.append(' ').append(r.load()).append(" |\n");
      }
    }
    return out.toString();
  }

  private static String countHeadings(Results results) {
    StringBuilder out = new StringBuilder();
    for (String unit : results.units) {
      out.append(' ').append(unit).append(" / cycle |");
    }
    return out.toString();
  }

  private static List<Double> boxed(double[] values) {
    return Arrays.stream(values).boxed().toList();
  }

  private static String counts(List<Double> perCycle) {
    StringBuilder out = new StringBuilder();
    for (double value : perCycle) {
      out.append(String.format(Locale.ROOT, " %.2f |", value));
    }
    return out.toString();
  }

  /**
   * latchkey on a URI, one client for all threads, {@code lock()}/{@code unlock()} with the
   * watchdog lease the Redis comparison uses.
   */
  static Peer latchkey(String label, String uri) {
    Latchkey latchkey =
        Latchkey.connect(
            uri,
            LatchkeyOptions.builder()
                .leaseTime(LockClients.DEFAULT_WATCHDOG_LEASE)
                .closeOnShutdown(false)
                .build());
    return Peer.of(label, name -> Locker.lockUnlock(latchkey.lock(name)), latchkey::close);
  }

  /** A peer's version from {@code peer-versions.properties}, which the build fills in. */
  static String peerVersion(String key) {
    try (InputStream in = PeerComparison.class.getResourceAsStream("peer-versions.properties")) {
      Properties versions = new Properties();
      if (in != null) {
        versions.load(in);
      }
      return versions.getProperty(key, "(version unknown)");
    } catch (IOException e) {
      return "(version unknown)";
    }
  }

  /** The heading and the first rows of a targets table. */
  static StringBuilder targetsTable(String issue) {
    return new StringBuilder("#### Targets (")
        .append(issue)
        .append(")\n\n| target | measured | verdict |\n|---|---|---|\n");
  }

  /**
   * A targets row for an uncontended latency ratio, judged on the worse of p50 and mean.
   *
   * @param target what the row says
   * @param ours the library under test
   * @param theirs the reference
   * @param maxRatio the ratio not to exceed; infinite for a row that is only reported
   */
  static String latencyTarget(
      String target,
      PairedLatency.Latencies ours,
      PairedLatency.Latencies theirs,
      double maxRatio) {
    double p50 = ours.percentileMicros(0.5) / theirs.percentileMicros(0.5);
    double mean = ours.meanMicros() / theirs.meanMicros();
    return String.format(
        Locale.ROOT,
        "| %s (paired) | p50 %.2f×, mean %.2f× (%.1f / %.1f µs, %.1f / %.1f µs) | %s |%n",
        target,
        p50,
        mean,
        ours.percentileMicros(0.5),
        theirs.percentileMicros(0.5),
        ours.meanMicros(),
        theirs.meanMicros(),
        Double.isInfinite(maxRatio) ? "-" : Math.max(p50, mean) <= maxRatio ? "met" : "**missed**");
  }

  private static String millis(double value) {
    return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.2f", value);
  }

  /**
   * The machine line of a report.
   *
   * @param versions "Name version" of each server and library
   */
  static String machine(
      String startedAt,
      String loadBefore,
      String loadAfter,
      Duration took,
      boolean quick,
      List<String> versions) {
    return String.format(
        Locale.ROOT,
        "%d cores (%s), %s %s; %s %s (%s); %s; run started %s, took %d min %02d s%s;"
            + " load average (1, 5, 15 min) %s before, %s after.",
        Runtime.getRuntime().availableProcessors(),
        RedisBenchmarks.cpuModel(),
        System.getProperty("os.name"),
        System.getProperty("os.version"),
        System.getProperty("java.vm.name"),
        System.getProperty("java.runtime.version"),
        System.getProperty("java.vm.vendor"),
        String.join("; ", versions),
        startedAt,
        took.toMinutes(),
        took.toSecondsPart(),
        quick ? " (--quick: a smoke run, not a measurement)" : "",
        loadBefore,
        loadAfter);
  }

  /** When a run started, for {@link #finish}. */
  record Start(String at, String load, long nanos) {
    /** Now; and keeps the libraries' start-up chatter out of the report. */
    static Start now() {
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
      return new Start(Instant.now().toString(), RedisBenchmarks.loadAverage(), System.nanoTime());
    }
  }

  /**
   * Prints the report and writes it to {@code settings.out/file}.
   *
   * @param body the tables and targets
   */
  static void finish(
      String tag, Settings settings, String file, Start start, List<String> versions, String body)
      throws Exception {
    Duration took = Duration.ofNanos(System.nanoTime() - start.nanos());
    String report =
        "Machine: "
            + machine(
                start.at(),
                start.load(),
                RedisBenchmarks.loadAverage(),
                took,
                settings.quick,
                versions)
            + "\n\n"
            + body;
    Files.createDirectories(settings.out);
    Path path = settings.out.resolve(file);
    Files.writeString(path, report, StandardCharsets.UTF_8);
    System.out.println();
    System.out.println(report);
    log(tag, "report written to " + path.toAbsolutePath());
  }

  static void log(String tag, String line) {
    System.out.println("[" + tag + "] " + line);
    System.out.flush();
  }
}
