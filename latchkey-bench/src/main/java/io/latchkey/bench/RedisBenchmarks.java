package io.latchkey.bench;

import io.latchkey.bench.ContentionCounts.Counted;
import io.latchkey.bench.ContentionCounts.Shape;
import io.latchkey.bench.LockClients.Library;
import io.latchkey.bench.RenewalCounts.Renewed;
import io.latchkey.servers.RedisTestServer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * The whole Redis comparison in one run, on one {@code redis-server} that it starts itself on a
 * free loopback port (never the machine's Redis), in this order:
 *
 * <ol>
 *   <li>the JMH benchmarks of {@link RedisLockBenchmark} (latency and throughput), in forked JVMs
 *       that it points at its server;
 *   <li>{@link PairedLatency}: the uncontended latencies again, the variants interleaved, so that
 *       their ratios hold on a machine whose load drifts;
 *   <li>{@link ContentionCounts}: Redis commands per acquire+release cycle under contention (INFO
 *       commandstats, and MONITOR for what clients sent);
 *   <li>{@link AllocationCounts}: bytes allocated per uncontended cycle, every thread counted;
 *   <li>{@link RenewalCounts}: the watchdog's script calls per period for 10,000 held locks.
 * </ol>
 *
 * It prints a Markdown report with the targets of the Redis issue, and writes it, with JMH's JSON
 * results, to the output directory.
 *
 * <pre>
 * java -cp latchkey-bench/target/latchkey-benchmarks.jar io.latchkey.bench.RedisBenchmarks [options]
 *   --out DIR         where to write redis-benchmark.md and redis-jmh.json
 *                     (default latchkey-bench/target/redis-benchmark)
 *   --quick           a smoke run: one short JMH iteration each, short windows
 *   --jmh REGEX       only the JMH benchmarks whose method matches (e.g. 'single.*')
 *   --prof NAME       a JMH profiler for every JMH benchmark (gc, stack, ...); repeatable
 *   --skip-jmh        no JMH: only steps 2 to 5
 *   --skip-counts     only the JMH benchmarks (step 1)
 * </pre>
 *
 * <p>Takes about 8 minutes on a 2-core machine.
 */
public final class RedisBenchmarks {
  private static final int RENEWED_LOCKS = 10_000;
  private static final Duration RENEWAL_LEASE = Duration.ofSeconds(3);
  private static final String BENCHMARK_CLASS = RedisLockBenchmark.class.getName();

  // The targets.
  private static final double UNCONTENDED_MAX_RATIO = 1.2;
  private static final double MAX_COMMANDS_PER_CYCLE = 4;
  private static final double MAX_RENEWAL_ROUND_TRIPS = 20;

  private RedisBenchmarks() {}

  /**
   * Runs everything and prints the report.
   *
   * @param args the options above
   * @throws Exception if a benchmark fails
   */
  public static void main(String[] args) throws Exception {
    Settings settings = Settings.parse(args);
    // Keep Redisson's and Lettuce's start-up chatter out of the report.
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    Files.createDirectories(settings.out);
    String startedAt = Instant.now().toString();
    String loadBefore = loadAverage();
    long start = System.nanoTime();
    try (RedisTestServer server = RedisTestServer.start()) {
      String redisVersion = server.info("server").getOrDefault("redis_version", "?");
      log("Redis " + redisVersion + " (" + server.binary() + ") at " + server.uri());
      Map<String, RunResult> jmh = settings.skipJmh ? Map.of() : runJmh(settings, server.uri());
      List<Counted> counts = new ArrayList<>();
      List<Renewed> renewals = new ArrayList<>();
      List<PairedLatency.Latencies> paired = new ArrayList<>();
      List<AllocationCounts.Allocated> allocated = new ArrayList<>();
      if (!settings.skipCounts) {
        paired = PairedLatency.measure(server.uri(), settings.pairedWarmup, settings.pairedWindow);
        for (PairedLatency.Latencies latencies : paired) {
          log(
              String.format(
                  Locale.ROOT,
                  "paired %-14s p50 %7.1f µs  p99 %7.1f µs  (%d cycles)",
                  latencies.label(),
                  latencies.percentileMicros(0.5),
                  latencies.percentileMicros(0.99),
                  latencies.count()));
        }
        counts = countCommands(settings, server);
        allocated = AllocationCounts.measure(server.uri());
        renewals = countRenewals(settings, server);
      }
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      String report =
          new Report(
                  jmh,
                  paired,
                  counts,
                  allocated,
                  renewals,
                  machine(redisVersion, startedAt, loadBefore, loadAverage(), took, settings))
              .render();
      Path file = settings.out.resolve("redis-benchmark.md");
      Files.writeString(file, report, StandardCharsets.UTF_8);
      System.out.println();
      System.out.println(report);
      log("report written to " + file.toAbsolutePath());
    }
  }

  private static Map<String, RunResult> runJmh(Settings settings, String uri)
      throws RunnerException {
    ChainedOptionsBuilder options =
        new OptionsBuilder()
            .include(BENCHMARK_CLASS + "\\." + settings.jmhFilter)
            .jvmArgsAppend(
                "-Xms1g",
                "-Xmx1g",
                "-D" + RedisTarget.URI_PROPERTY + "=" + uri,
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
            .resultFormat(ResultFormatType.JSON)
            .result(settings.out.resolve("redis-jmh.json").toString());
    if (settings.quick) {
      options
          .warmupIterations(1)
          .warmupTime(TimeValue.seconds(1))
          .measurementIterations(1)
          .measurementTime(TimeValue.seconds(1));
    }
    for (String profiler : settings.profilers) {
      options.addProfiler(profiler);
    }
    Collection<RunResult> results = new Runner(options.build()).run();
    Map<String, RunResult> byMethod = new LinkedHashMap<>();
    for (RunResult result : results) {
      String benchmark = result.getParams().getBenchmark();
      byMethod.put(benchmark.substring(benchmark.lastIndexOf('.') + 1), result);
    }
    return byMethod;
  }

  private static List<Counted> countCommands(Settings settings, RedisTestServer server)
      throws InterruptedException {
    List<Shape> shapes = new ArrayList<>();
    shapes.add(new Shape(Library.FLOOR, 1, 8));
    for (Library library : List.of(Library.LATCHKEY, Library.REDISSON)) {
      shapes.add(new Shape(library, 1, 1));
      shapes.add(new Shape(library, 1, 8));
      for (int clients : List.of(2, 4, 8, 16)) {
        shapes.add(new Shape(library, clients, 1));
      }
    }
    List<Counted> counted = new ArrayList<>();
    for (Shape shape : shapes) {
      Counted result = ContentionCounts.count(server, shape, settings.settle, settings.window);
      log(
          String.format(
              Locale.ROOT,
              "commands %-16s %7d cycles  %5.2f sent by clients per cycle (%s)",
              shape.label(),
              result.cycles(),
              result.sentPerCycle(),
              CommandStats.perUnit(result.sent(), (double) result.cycles())));
      counted.add(result);
    }
    return counted;
  }

  private static List<Renewed> countRenewals(Settings settings, RedisTestServer server)
      throws InterruptedException {
    List<Renewed> renewed = new ArrayList<>();
    for (Library library : List.of(Library.LATCHKEY, Library.REDISSON)) {
      Renewed result =
          RenewalCounts.measure(
              server, library, RENEWED_LOCKS, RENEWAL_LEASE, settings.renewalPeriods);
      log(
          String.format(
              Locale.ROOT,
              "renewal %s: %.1f script calls per period (%s)",
              library.label(),
              result.roundTripsPerPeriod(),
              result.stats().clientOnly().perUnit(result.periods())));
      renewed.add(result);
    }
    return renewed;
  }

  private static String machine(
      String redisVersion,
      String startedAt,
      String loadBefore,
      String loadAfter,
      Duration took,
      Settings settings) {
    return PeerComparison.machine(
        startedAt,
        loadBefore,
        loadAfter,
        took,
        settings.quick,
        List.of(
            "Redis " + redisVersion,
            "Lettuce " + mavenVersion("io.lettuce", "lettuce-core"),
            "Redisson " + mavenVersion("org.redisson", "redisson")));
  }

  static String mavenVersion(String group, String artifact) {
    try (InputStream in =
        RedisBenchmarks.class.getResourceAsStream(
            "/META-INF/maven/" + group + "/" + artifact + "/pom.properties")) {
      Properties properties = new Properties();
      if (in != null) {
        properties.load(in);
      }
      return properties.getProperty("version", "(version unknown)");
    } catch (IOException e) {
      return "(version unknown)";
    }
  }

  static String cpuModel() {
    try (Stream<String> lines = Files.lines(Paths.get("/proc/cpuinfo"))) {
      return lines
          .filter(line -> line.startsWith("model name"))
          .map(line -> line.substring(line.indexOf(':') + 1).trim())
          .findFirst()
          .orElse("unknown CPU");
    } catch (IOException | RuntimeException e) {
      return "unknown CPU";
    }
  }

  /** The 1, 5 and 15 minute load averages, from /proc/loadavg. */
  static String loadAverage() {
    try {
      String[] fields = Files.readString(Paths.get("/proc/loadavg")).trim().split("\\s+", -1);
      return fields[0] + ", " + fields[1] + ", " + fields[2];
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }

  private static void log(String line) {
    System.out.println("[redis-bench] " + line);
    System.out.flush();
  }

  /** The command line. */
  private static final class Settings {
    Path out = Paths.get("latchkey-bench", "target", "redis-benchmark");
    boolean quick;
    boolean skipJmh;
    boolean skipCounts;
    String jmhFilter = ".*";
    final List<String> profilers = new ArrayList<>();
    Duration settle = Duration.ofSeconds(1);
    Duration window = Duration.ofSeconds(3);
    Duration pairedWarmup = Duration.ofSeconds(3);
    Duration pairedWindow = Duration.ofSeconds(12);
    int renewalPeriods = 10;

    static Settings parse(String[] args) {
      Settings settings = new Settings();
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--out" -> settings.out = Paths.get(value(args, ++i));
          case "--quick" -> {
            settings.quick = true;
            settings.window = Duration.ofSeconds(1);
            settings.pairedWarmup = Duration.ofSeconds(1);
            settings.pairedWindow = Duration.ofSeconds(2);
            settings.renewalPeriods = 2;
          }
          case "--jmh" -> settings.jmhFilter = value(args, ++i);
          case "--prof" -> settings.profilers.add(value(args, ++i));
          case "--skip-jmh" -> settings.skipJmh = true;
          case "--skip-counts" -> settings.skipCounts = true;
          default ->
              throw new IllegalArgumentException(
                  "unknown option "
                      + args[i]
                      + "; expected --out DIR, --quick, --jmh REGEX, --prof NAME, --skip-jmh,"
                      + " --skip-counts (see the Javadoc of RedisBenchmarks)");
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

  /** Renders the results as Markdown. */
  private static final class Report {
    private final Map<String, RunResult> jmh;
    private final List<PairedLatency.Latencies> paired;
    private final List<Counted> counts;
    private final List<AllocationCounts.Allocated> allocated;
    private final List<Renewed> renewals;
    private final String machine;
    private final StringBuilder out = new StringBuilder();

    Report(
        Map<String, RunResult> jmh,
        List<PairedLatency.Latencies> paired,
        List<Counted> counts,
        List<AllocationCounts.Allocated> allocated,
        List<Renewed> renewals,
        String machine) {
      this.jmh = jmh;
      this.paired = paired;
      this.counts = counts;
      this.allocated = allocated;
      this.renewals = renewals;
      this.machine = machine;
    }

    String render() {
      line("## Redis: latchkey beside the floor and Redisson");
      line("");
      line("Machine: " + machine);
      line("");
      if (!jmh.isEmpty()) {
        renderSingle();
      }
      if (!paired.isEmpty()) {
        renderPaired();
      }
      if (!jmh.isEmpty()) {
        renderThroughput("contended", "(b) eight threads, one lock: throughput");
        renderThroughput("independent", "(c) eight threads, a lock each: throughput");
      }
      if (!counts.isEmpty()) {
        renderCounts();
        renderAllocated();
        renderRenewals();
      }
      renderTargets();
      return out.toString();
    }

    private void renderSingle() {
      line("### (a) one thread, one lock, uncontended: latency per acquire+release");
      line("");
      line("| variant | p50 µs | p99 µs | mean µs | pairs/s | p50 vs floor | mean vs floor |");
      line("|---|---:|---:|---:|---:|---:|---:|");
      @Nullable Result<?> floor = primary("singleFloor");
      for (String method :
          List.of(
              "singleFloor",
              "singleLatchkeySpi",
              "singleLatchkeyLock",
              "singleLatchkeyLease",
              "singleRedissonLock",
              "singleRedissonLease")) {
        Result<?> result = primary(method);
        if (result == null) {
          continue;
        }
        double p50 = result.getStatistics().getPercentile(50);
        double p99 = result.getStatistics().getPercentile(99);
        double mean = result.getScore();
        line(
            String.format(
                Locale.ROOT,
                "| `%s` | %.1f | %.1f | %.1f | %,.0f | %s | %s |",
                method,
                p50,
                p99,
                mean,
                1e6 / mean,
                floor == null ? "-" : ratio(p50, floor.getStatistics().getPercentile(50)),
                floor == null ? "-" : ratio(mean, floor.getScore())));
      }
      line("");
    }

    private void renderPaired() {
      line("### (a′) the same, paired: one cycle of each variant in turn, in one thread");
      line("");
      line(
          "Every variant meets the same machine at the same moments, so the ratios hold even when"
              + " the load drifts between JMH's runs (see PairedLatency).");
      line("");
      line("| variant | cycles | p50 µs | p99 µs | mean µs | p50 vs floor | mean vs floor |");
      line("|---|---:|---:|---:|---:|---:|---:|");
      PairedLatency.Latencies floor = paired.get(0);
      for (PairedLatency.Latencies latencies : paired) {
        line(
            String.format(
                Locale.ROOT,
                "| %s | %,d | %.1f | %.1f | %.1f | %s | %s |",
                latencies.label(),
                latencies.count(),
                latencies.percentileMicros(0.5),
                latencies.percentileMicros(0.99),
                latencies.meanMicros(),
                ratio(latencies.percentileMicros(0.5), floor.percentileMicros(0.5)),
                ratio(latencies.meanMicros(), floor.meanMicros())));
      }
      line("");
    }

    private void renderThroughput(String shape, String title) {
      line("### " + title);
      line("");
      line("| variant | pairs/s | ± (99.9%) | vs floor | vs Redisson, same clients and style |");
      line("|---|---:|---:|---:|---:|");
      @Nullable Result<?> floor = primary(shape + "Floor");
      for (Map.Entry<String, RunResult> entry : jmh.entrySet()) {
        String method = entry.getKey();
        if (!method.startsWith(shape)) {
          continue;
        }
        Result<?> result = entry.getValue().getPrimaryResult();
        @Nullable Result<?> redisson =
            method.contains("Latchkey") ? primary(method.replace("Latchkey", "Redisson")) : null;
        line(
            String.format(
                Locale.ROOT,
                "| `%s` | %,.0f | %,.0f | %s | %s |",
                method,
                result.getScore(),
                result.getScoreError(),
                floor == null ? "-" : ratio(result.getScore(), floor.getScore()),
                redisson == null ? "-" : ratio(result.getScore(), redisson.getScore())));
      }
      line("");
    }

    private void renderCounts() {
      line("### (d) Redis commands per acquire+release cycle under contention");
      line("");
      line(
          "Clients × threads per client, all on one lock, each client with its own connections"
              + " (a client stands for a process). Two windows per shape. The quiet one gives the"
              + " speed, the server time per script call, and the commands only clients can send"
              + " (EVALSHA, EVAL, (UN)SUBSCRIBE, PING, ...) per cycle. The monitored one counts,"
              + " by MONITOR, all the commands clients sent (\"sent\", each a round trip: the"
              + " comparable count, the one the target is about), while INFO commandstats counts"
              + " every command Redis ran (\"all\": it adds those run inside scripts). A DEL or a"
              + " PUBLISH may come from a client or a script: only MONITOR tells. \"Seen\" is how"
              + " much of commandstats' total MONITOR saw.");
      line("");
      line(
          "| shape | cycles/s (quiet) | server µs / script call (quiet) | client-only / cycle"
              + " (quiet) | cycles (monitored) | **sent / cycle** | sent, by command | all /"
              + " cycle | seen |");
      line("|---|---:|---:|---:|---:|---:|---|---:|---:|");
      for (Counted counted : counts) {
        line(
            String.format(
                Locale.ROOT,
                "| %s | %,.0f | %.1f | %.2f | %,d | **%.2f** | %s | %.1f | %.0f%% |",
                counted.shape().label(),
                counted.quiet().cyclesPerSecond(),
                counted.quiet().usecPerScriptCall(),
                counted.quiet().clientOnlyPerCycle(),
                counted.cycles(),
                counted.sentPerCycle(),
                CommandStats.perUnit(counted.sent(), (double) counted.cycles()),
                counted.allPerCycle(),
                counted.monitorCoverage() * 100));
      }
      line("");
      line("Commands run inside scripts, per cycle (MONITOR):");
      line("");
      for (Counted counted : counts) {
        line(
            "- "
                + counted.shape().label()
                + ": "
                + CommandStats.perUnit(counted.inScripts(), (double) counted.cycles()));
      }
      line("");
    }

    private void renderAllocated() {
      line("### (a″) bytes allocated per uncontended cycle, every thread counted");
      line("");
      line(
          "One thread, one lock, each variant alone; the JVM's allocation counters of all threads"
              + " (the caller's, the client's network and timer threads) over batches of "
              + "cycles (see AllocationCounts). The lowest batch, and the median.");
      line("");
      line("| variant | lowest B/cycle | median B/cycle | lowest over the floor |");
      line("|---|---:|---:|---:|");
      AllocationCounts.Allocated floor = allocated.get(0);
      for (AllocationCounts.Allocated variant : allocated) {
        line(
            String.format(
                Locale.ROOT,
                "| %s | %,.0f | %,.0f | %+,.0f |",
                variant.label(),
                variant.lowest(),
                variant.median(),
                variant.lowest() - floor.lowest()));
      }
      line("");
    }

    private void renderRenewals() {
      line("### (e) the watchdog renewing " + RENEWED_LOCKS + " held locks");
      line("");
      line(
          "One client holds "
              + RENEWED_LOCKS
              + " locks taken with lock() (watchdog lease "
              + RENEWAL_LEASE.toSeconds()
              + " s, renewed every "
              + RENEWAL_LEASE.dividedBy(3).toMillis()
              + " ms); script calls counted over the periods. The floor is 1: one script call"
              + " can renew every lock of a standalone server. \"Server µs / call\" is how long"
              + " Redis runs one such call, blocking every other client meanwhile; the commands"
              + " inside the scripts show how many locks each period actually renewed.");
      line("");
      line(
          "| library | periods | script calls / period | breakdown / period | server µs / call |"
              + " inside scripts / period |");
      line("|---|---:|---:|---|---:|---|");
      for (Renewed renewed : renewals) {
        Map<String, Long> inScripts = new LinkedHashMap<>(renewed.stats().calls());
        inScripts.keySet().removeIf(CommandStats::isClientOnly);
        line(
            String.format(
                Locale.ROOT,
                "| %s | %d | **%.1f** | %s | %,.0f | %s |",
                renewed.library().label(),
                renewed.periods(),
                renewed.roundTripsPerPeriod(),
                renewed.stats().clientOnly().perUnit(renewed.periods()),
                renewed.usecPerCall(),
                CommandStats.perUnit(inScripts, renewed.periods())));
      }
      line("");
    }

    private void renderTargets() {
      line("### Targets (issue 3)");
      line("");
      line("| target | measured | verdict |");
      line("|---|---|---|");
      if (paired.size() > 2) {
        PairedLatency.Latencies floor = paired.get(0);
        PairedLatency.Latencies latchkey = paired.get(2);
        double p50 = latchkey.percentileMicros(0.5) / floor.percentileMicros(0.5);
        double mean = latchkey.meanMicros() / floor.meanMicros();
        double worst = Math.max(p50, mean);
        line(
            String.format(
                Locale.ROOT,
                "| uncontended ≤ %.1f× the floor (paired) | p50 %.2f×, mean %.2f× | %s |",
                UNCONTENDED_MAX_RATIO,
                p50,
                mean,
                verdict(worst <= UNCONTENDED_MAX_RATIO, worst / UNCONTENDED_MAX_RATIO - 1)));
      }
      Result<?> floor = primary("singleFloor");
      Result<?> lock = primary("singleLatchkeyLock");
      if (floor != null && lock != null) {
        double p50 =
            lock.getStatistics().getPercentile(50) / floor.getStatistics().getPercentile(50);
        double mean = lock.getScore() / floor.getScore();
        double worst = Math.max(p50, mean);
        line(
            String.format(
                Locale.ROOT,
                "| uncontended ≤ %.1f× the floor (JMH) | p50 %.2f×, mean %.2f× | %s |",
                UNCONTENDED_MAX_RATIO,
                p50,
                mean,
                verdict(worst <= UNCONTENDED_MAX_RATIO, worst / UNCONTENDED_MAX_RATIO - 1)));
      }
      for (String method :
          List.of(
              "contendedLatchkeyLock", "contendedLatchkeyLease", "contendedLatchkeyLock8Clients")) {
        Result<?> ours = primary(method);
        Result<?> theirs = primary(method.replace("Latchkey", "Redisson"));
        if (ours != null && theirs != null) {
          double ratio = ours.getScore() / theirs.getScore();
          line(
              String.format(
                  Locale.ROOT,
                  "| contended throughput ≥ Redisson's (`%s`) | %,.0f vs %,.0f pairs/s (%.2f×) |"
                      + " %s |",
                  method,
                  ours.getScore(),
                  theirs.getScore(),
                  ratio,
                  verdict(ratio >= 1, 1 - ratio)));
        }
      }
      counts.stream()
          .filter(c -> c.shape().library() == Library.LATCHKEY && c.shape().threads() > 1)
          .max((a, b) -> Double.compare(a.sentPerCycle(), b.sentPerCycle()))
          .ifPresent(
              worst ->
                  line(
                      String.format(
                          Locale.ROOT,
                          "| ≤ %.0f commands per cycle under contention, whatever the waiters |"
                              + " worst %.2f (%s) | %s |",
                          MAX_COMMANDS_PER_CYCLE,
                          worst.sentPerCycle(),
                          worst.shape().label(),
                          verdict(
                              worst.sentPerCycle() <= MAX_COMMANDS_PER_CYCLE,
                              worst.sentPerCycle() / MAX_COMMANDS_PER_CYCLE - 1))));
      renewals.stream()
          .filter(r -> r.library() == Library.LATCHKEY)
          .findFirst()
          .ifPresent(
              renewed ->
                  line(
                      String.format(
                          Locale.ROOT,
                          "| renewing %,d held locks ≤ %.0f round trips per period | %.1f | %s |",
                          renewed.locks(),
                          MAX_RENEWAL_ROUND_TRIPS,
                          renewed.roundTripsPerPeriod(),
                          verdict(
                              renewed.roundTripsPerPeriod() <= MAX_RENEWAL_ROUND_TRIPS,
                              renewed.roundTripsPerPeriod() / MAX_RENEWAL_ROUND_TRIPS - 1))));
      line("");
    }

    private @Nullable Result<?> primary(String method) {
      RunResult result = jmh.get(method);
      return result == null ? null : result.getPrimaryResult();
    }

    private static String ratio(double value, double base) {
      return String.format(Locale.ROOT, "%.2f×", value / base);
    }

    private static String verdict(boolean met, double missedBy) {
      return met
          ? "met"
          : String.format(Locale.ROOT, "**missed** by %.0f%%", Math.abs(missedBy) * 100);
    }

    private void line(String text) {
      out.append(text).append('\n');
    }
  }
}
