package io.latchkey.bench;

import io.latchkey.LatchkeyOptions;
import io.latchkey.LockMode;
import io.latchkey.bench.LockClients.Library;
import io.latchkey.bench.LockClients.Style;
import io.latchkey.servers.RedisTestServer;
import io.latchkey.spi.LockRequest;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Where the uncontended cycle of latchkey's Redis backend spends its time beyond the floor of two
 * EVALSHA round trips ({@code ContendedRounds --decompose S}). Four cycles, paired as in {@link
 * PairedLatency}, on one connection each:
 *
 * <ol>
 *   <li>{@code floor}: {@link Library#FLOOR}, {@code return 1} with one key and one argument;
 *   <li>{@code floor wide}: the same script with the keys and arguments that latchkey's acquire and
 *       release send (7 keys and 7 arguments, then 6 keys and 3), so the difference to the floor is
 *       the cost of their size on the wire and in Lettuce;
 *   <li>{@code raw scripts}: latchkey's own acquire and release scripts ({@code lib.lua} in front,
 *       the PUBLISH dialect, as {@code RedisScript} builds them) sent by plain Lettuce EVALSHA with
 *       the keys and arguments that {@code RedisLockStore} sends for an exclusive {@code lock()},
 *       no latchkey code: the difference to {@code floor wide} is the scripts' work in the server;
 *   <li>{@code SPI}: {@link Library#SPI}, the same scripts through latchkey's backend: the
 *       difference to {@code raw scripts} is latchkey's client-side work (key building, reply
 *       parsing, its futures and its connection handling).
 * </ol>
 *
 * Then each of the first three runs alone for a quarter of the window between {@code CONFIG
 * RESETSTAT} and {@code INFO commandstats}, which gives the server's microseconds per cycle: the
 * EVALSHA calls (which include the commands they run) and each command run inside the scripts.
 * Every figure goes to standard output with the load average.
 */
final class CycleDecomposition {
  private CycleDecomposition() {}

  private static final long REPLY_TIMEOUT_SECONDS = 10;

  /**
   * Measures and prints the decomposition.
   *
   * @param server the server, which this class resets the statistics of
   * @param window how long the paired run lasts (after a quarter of it as warm-up)
   * @param log where lines go
   */
  static void run(RedisTestServer server, Duration window, Consumer<String> log) throws Exception {
    String owner = "decomposed";
    LockRequest request =
        new LockRequest(
            "decomposed",
            owner,
            LockMode.EXCLUSIVE,
            LockClients.DEFAULT_WATCHDOG_LEASE.toMillis(),
            false,
            LatchkeyOptions.defaults().queueKeepAlive().toMillis());
    RedisClient client = RedisClient.create();
    try (StatefulRedisConnection<String, String> floorWide =
            client.connect(StringCodec.UTF8, RedisURI.create(server.uri()));
        StatefulRedisConnection<String, String> raw =
            client.connect(StringCodec.UTF8, RedisURI.create(server.uri()));
        LockClients floor =
            LockClients.open(Library.FLOOR, 1, server.uri(), LockClients.DEFAULT_WATCHDOG_LEASE);
        LockClients spi =
            LockClients.open(Library.SPI, 1, server.uri(), LockClients.DEFAULT_WATCHDOG_LEASE)) {
      List<PairedLatency.Variant> variants =
          List.of(
              new PairedLatency.Variant(
                  "floor", floor.cycle(0, "decomposed:floor", owner, Style.LOCK)),
              new PairedLatency.Variant(
                  "floor wide",
                  scriptCycle(floorWide, "return '1'", LockClients.FLOOR_SCRIPT, "wide", request)),
              new PairedLatency.Variant(
                  "raw scripts",
                  scriptCycle(
                      raw,
                      latchkeyScript("lock-acquire"),
                      latchkeyScript("lock-release"),
                      "raw",
                      request)),
              new PairedLatency.Variant("SPI", spi.cycle(0, "decomposed:spi", owner, Style.LOCK)));
      List<PairedLatency.Latencies> measured =
          PairedLatency.measure(variants, window.dividedBy(4), window);
      double floorP50 = measured.get(0).percentileMicros(0.5);
      double floorMean = measured.get(0).meanMicros();
      for (PairedLatency.Latencies latencies : measured) {
        log.accept(
            String.format(
                Locale.ROOT,
                "decompose %-12s p50 %7.1f µs (%.2fx)  mean %7.1f µs (%.2fx)  p99 %8.1f µs"
                    + "  (%d cycles)",
                latencies.label(),
                latencies.percentileMicros(0.5),
                latencies.percentileMicros(0.5) / floorP50,
                latencies.meanMicros(),
                latencies.meanMicros() / floorMean,
                latencies.percentileMicros(0.99),
                latencies.count()));
      }
      log.accept("decompose paired run done, load " + RedisBenchmarks.loadAverage());
      for (int i = 0; i < 3; i++) {
        serverTime(server, variants.get(i), window.dividedBy(4), log);
      }
    } finally {
      client.shutdown();
    }
  }

  /**
   * One variant alone, between CONFIG RESETSTAT and INFO commandstats: the server's microseconds
   * per cycle, of the EVALSHA calls and of each command that the scripts ran.
   */
  private static void serverTime(
      RedisTestServer server, PairedLatency.Variant variant, Duration window, Consumer<String> log)
      throws Exception {
    server.command("CONFIG", "RESETSTAT");
    long cycles = 0;
    long end = System.nanoTime() + window.toNanos();
    while (System.nanoTime() < end) {
      variant.cycle().run();
      cycles++;
    }
    CommandStats stats = CommandStats.read(server);
    StringBuilder inner = new StringBuilder();
    for (Map.Entry<String, CommandStats.Totals> command : stats.byCommand().entrySet()) {
      if (!CommandStats.isClientOnly(command.getKey())) {
        inner.append(
            String.format(
                Locale.ROOT,
                " %s %.2f/%.2f",
                command.getKey(),
                command.getValue().calls() / (double) cycles,
                command.getValue().usec() / (double) cycles));
      }
    }
    log.accept(
        String.format(
            Locale.ROOT,
            "server %-12s evalsha %.2f calls %.2f µs per cycle; inside (calls/µs per cycle):%s;"
                + " load %s",
            variant.label(),
            stats.calls("evalsha") / (double) cycles,
            stats.usec("evalsha") / (double) cycles,
            inner.length() == 0 ? " none" : inner.toString(),
            RedisBenchmarks.loadAverage()));
  }

  /**
   * An acquire+release cycle of plain EVALSHA calls with the keys and arguments of latchkey's
   * exclusive acquire and release.
   *
   * @param acquireScript the text run as the acquire, with a string reply
   * @param releaseScript the text run as the release, with an integer reply
   * @param name the lock name, unique to the variant
   */
  private static LockClients.Cycle scriptCycle(
      StatefulRedisConnection<String, String> connection,
      String acquireScript,
      String releaseScript,
      String name,
      LockRequest request) {
    RedisAsyncCommands<String, String> commands = connection.async();
    String acquireSha = connection.sync().scriptLoad(acquireScript);
    String releaseSha = connection.sync().scriptLoad(releaseScript);
    // RedisKeys' layout under the default prefix.
    String holders = "latchkey:lock:{decomposed:" + name + "}";
    String[] acquireKeys = {
      holders,
      holders + ":fence",
      holders + ":queue",
      holders + ":queue-deadlines",
      holders + ":queue-writers",
      holders + ":wakeups",
      holders + ":queue-handoff"
    };
    String[] releaseKeys = {
      holders,
      holders + ":queue",
      holders + ":queue-deadlines",
      holders + ":queue-writers",
      holders + ":wakeups",
      holders + ":queue-handoff"
    };
    String[] acquireArgs = {
      request.owner(),
      "x",
      Long.toString(request.leaseMillis()),
      request.fair() ? "1" : "0",
      Long.toString(request.queueKeepAliveMillis()),
      "bench-spi-0",
      Long.toString(request.handoffMillis())
    };
    return () -> {
      String acquired =
          String.valueOf(
              commands
                  .<Object>evalsha(acquireSha, ScriptOutputType.VALUE, acquireKeys, acquireArgs)
                  .get(REPLY_TIMEOUT_SECONDS, TimeUnit.SECONDS));
      // The floor's reply is 1; latchkey's is 'status:token:holds:retryAfter', status 1 granted.
      if (!acquired.startsWith("1")) {
        throw new IllegalStateException("the acquire answered " + acquired);
      }
      int colon = acquired.indexOf(':');
      String token =
          colon < 0 ? "0" : acquired.substring(colon + 1, acquired.indexOf(':', colon + 1));
      Long released =
          commands
              .<Long>evalsha(
                  releaseSha, ScriptOutputType.INTEGER, releaseKeys, request.owner(), "x", token)
              .get(REPLY_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      if (released == null || released < 0) {
        throw new IllegalStateException("the release answered " + released);
      }
    };
  }

  /** A latchkey script as RedisScript builds it for a server without sharded pub/sub. */
  private static String latchkeyScript(String name) {
    return "local PUBLISH_COMMAND = 'PUBLISH'\n" + resource("lib") + resource(name);
  }

  private static String resource(String name) {
    String path = "/io/latchkey/redis/" + name + ".lua";
    try (InputStream in = CycleDecomposition.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("script " + path + " is missing");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read script " + path, e);
    }
  }
}
