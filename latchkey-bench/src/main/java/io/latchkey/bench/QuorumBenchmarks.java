package io.latchkey.bench;

import io.latchkey.servers.FreezableTcpProxy;
import io.latchkey.servers.RedisTestServer;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import org.redisson.Redisson;
import org.redisson.RedissonMultiLock;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Issue 11's comparison: latchkey's quorum lock on five {@code redis-server}s beside Redisson's
 * multi-locks on the same five, and beside both libraries on one of them. It starts the five
 * servers itself on free loopback ports (never the machine's Redis).
 *
 * <ul>
 *   <li>{@code Latchkey quorum (5)}: {@code Latchkey.connect("quorum:redis://…,…")}, five members,
 *       a majority of three; {@code lock()}/{@code unlock()} (watchdog lease).
 *   <li>{@code Latchkey single}: {@code Latchkey.connect("redis://…")} on the first server.
 *   <li>{@code Redisson MultiLock (5)}: {@link RedissonMultiLock} over one {@code RLock} on each
 *       server (one Redisson client per server), which needs all five. {@link RedissonRedLock}, the
 *       majority variant, is deprecated in the Redisson of this build (3.52.0); it runs too, as
 *       {@code Redisson RedLock (5)}, because it is the one that does what latchkey's quorum does.
 *   <li>{@code Redisson single}: Redisson's {@code RLock} on the first server.
 * </ul>
 *
 * <pre>
 * java -cp latchkey-bench/target/latchkey-benchmarks.jar io.latchkey.bench.QuorumBenchmarks \
 *     [--member-delay 0.5ms] [--rounds 2] [--settle 2] [--window 5] [--paired 12] [--threads 8] \
 *     [--quick] [--out DIR]
 * </pre>
 *
 * <p>{@code --member-delay D} (e.g. {@code 0.5ms}, {@code 2ms}; default 0, plain loopback) puts
 * each server behind its own {@link FreezableTcpProxy} that holds every byte for D in each
 * direction, and every library reaches the servers only through those proxies (a round trip costs 2
 * × D more). On loopback the five servers and the client share the machine's cores, so a quorum's
 * five parallel calls queue for the CPU and the comparison with one server measures CPU, not round
 * trips; with a delay that dominates, it shows whether the quorum's round trips run in parallel.
 * The proxies' own threads cost CPU too, five times as much for the five-server libraries as for
 * one server.
 */
public final class QuorumBenchmarks {
  private static final String TAG = "quorum-bench";
  private static final int MEMBERS = 5;
  private static final double MAX_QUORUM_OVER_SINGLE = 1.5;

  static final String QUORUM = "Latchkey quorum (5)";
  static final String SINGLE = "Latchkey single";
  static final String MULTI = "Redisson MultiLock (5)";
  static final String RED = "Redisson RedLock (5)";
  static final String REDISSON_SINGLE = "Redisson single";

  private QuorumBenchmarks() {}

  /**
   * Runs the comparison and prints the report.
   *
   * @param args see the class comment
   * @throws Exception if a benchmark fails
   */
  public static void main(String[] args) throws Exception {
    List<String> rest = new ArrayList<>(List.of(args));
    Duration memberDelay = memberDelay(rest);
    PeerComparison.Settings settings =
        PeerComparison.Settings.parse(rest.toArray(String[]::new), "quorum-benchmark");
    PeerComparison.Start start = PeerComparison.Start.now();
    List<RedisTestServer> servers = new ArrayList<>();
    List<FreezableTcpProxy> proxies = new ArrayList<>();
    List<PeerComparison.Peer> peers = new ArrayList<>();
    try {
      for (int i = 0; i < MEMBERS; i++) {
        servers.add(RedisTestServer.start());
      }
      String redisVersion = servers.get(0).info("server").getOrDefault("redis_version", "?");
      List<String> uris = new ArrayList<>();
      for (RedisTestServer server : servers) {
        uris.add(memberDelay.isZero() ? server.uri() : viaProxy(server, memberDelay, proxies));
      }
      PeerComparison.log(
          TAG,
          "Redis "
              + redisVersion
              + " at "
              + String.join(", ", uris)
              + (memberDelay.isZero()
                  ? ""
                  : ", each behind a proxy delaying " + describe(memberDelay) + " each way"));
      peers.add(PeerComparison.latchkey(QUORUM, "quorum:" + String.join(",", uris)));
      peers.add(PeerComparison.latchkey(SINGLE, uris.get(0)));
      peers.add(redisson(MULTI, uris, false));
      peers.add(redisson(RED, uris, true));
      peers.add(redisson(REDISSON_SINGLE, uris.subList(0, 1), false));
      PeerComparison.Shape oneLock =
          new PeerComparison.Shape(
              settings.threads + " threads, one lock", settings.threads, false);
      PeerComparison.Results results =
          PeerComparison.run(TAG, peers, List.of(oneLock), settings, List.of());
      String body = PeerComparison.tables(results) + "\n" + targets(results, oneLock, settings);
      PeerComparison.finish(
          TAG,
          settings,
          "quorum-benchmark.md",
          start,
          List.of(
              "member links: "
                  + (memberDelay.isZero()
                      ? "loopback, no added delay"
                      : "loopback + "
                          + describe(memberDelay)
                          + " one-way delay per direction"
                          + " (--member-delay, FreezableTcpProxy)"),
              "Redis " + redisVersion,
              "Lettuce " + RedisBenchmarks.mavenVersion("io.lettuce", "lettuce-core"),
              "Redisson " + RedisBenchmarks.mavenVersion("org.redisson", "redisson")),
          body);
    } finally {
      peers.forEach(PeerComparison.Peer::close);
      proxies.forEach(FreezableTcpProxy::close);
      servers.forEach(RedisTestServer::close);
    }
  }

  /** Takes {@code --member-delay D} out of {@code args}: D as {@code 0.5ms}, {@code 2ms} or 0. */
  private static Duration memberDelay(List<String> args) {
    int at = args.indexOf("--member-delay");
    if (at < 0) {
      return Duration.ZERO;
    }
    if (at + 1 >= args.size()) {
      throw new IllegalArgumentException("--member-delay needs a value, e.g. 0.5ms");
    }
    String value = args.get(at + 1);
    args.subList(at, at + 2).clear();
    String millis = value.endsWith("ms") ? value.substring(0, value.length() - 2) : value;
    try {
      long nanos = new BigDecimal(millis).movePointRight(6).longValueExact();
      if (nanos < 0) {
        throw new IllegalArgumentException("--member-delay must not be negative, was " + value);
      }
      return Duration.ofNanos(nanos);
    } catch (ArithmeticException | NumberFormatException e) {
      throw new IllegalArgumentException(
          "--member-delay takes milliseconds like 0.5ms or 2ms, was '" + value + "'", e);
    }
  }

  private static String viaProxy(
      RedisTestServer server, Duration delay, List<FreezableTcpProxy> proxies) throws IOException {
    FreezableTcpProxy proxy = FreezableTcpProxy.start(server.host(), server.port(), delay);
    proxies.add(proxy);
    return "redis://" + proxy.host() + ":" + proxy.port();
  }

  private static String describe(Duration delay) {
    return BigDecimal.valueOf(delay.toNanos()).movePointLeft(6).stripTrailingZeros().toPlainString()
        + " ms";
  }

  private static String targets(
      PeerComparison.Results results,
      PeerComparison.Shape shape,
      PeerComparison.Settings settings) {
    PairedLatency.Latencies quorum = results.paired(QUORUM);
    StringBuilder out = PeerComparison.targetsTable("issue 11");
    out.append(
        PeerComparison.latencyTarget(
            "uncontended, 5 members ≤ 1.5× a single member",
            quorum,
            results.paired(SINGLE),
            MAX_QUORUM_OVER_SINGLE));
    for (String peer : List.of(RED, MULTI)) {
      out.append(
          PeerComparison.latencyTarget(
              "uncontended, at least as fast as " + peer, quorum, results.paired(peer), 1.0));
    }
    out.append(
        String.format(
            Locale.ROOT,
            "| contended throughput and fairness, beside a single member (reported) | %s | - |%n",
            java.util.stream.IntStream.rangeClosed(1, settings.rounds)
                .mapToObj(
                    round -> {
                      ContendedWindow.Result q = results.window(shape, QUORUM, round);
                      ContendedWindow.Result s = results.window(shape, SINGLE, round);
                      ContendedWindow.Result r = results.window(shape, RED, round);
                      return String.format(
                          Locale.ROOT,
                          "round %d: %.0f vs %.0f cycles/s (%.2f×; RedLock %.0f), fairness %.2f vs"
                              + " %.2f (RedLock %.2f)",
                          round,
                          q.throughput(),
                          s.throughput(),
                          q.throughput() / s.throughput(),
                          r.throughput(),
                          q.fairness(),
                          s.fairness(),
                          r.fairness());
                    })
                .collect(Collectors.joining("; "))));
    return out.toString();
  }

  /** Redisson on each server; a multi-lock over them when there are several. */
  private static PeerComparison.Peer redisson(String label, List<String> uris, boolean redLock) {
    List<RedissonClient> clients = new ArrayList<>();
    for (String uri : uris) {
      Config config = new Config();
      config.setLockWatchdogTimeout(LockClients.DEFAULT_WATCHDOG_LEASE.toMillis());
      config.useSingleServer().setAddress(uri);
      clients.add(Redisson.create(config));
    }
    return PeerComparison.Peer.of(
        label,
        name -> {
          if (clients.size() == 1) {
            return Locker.lockUnlock(clients.get(0).getLock(name));
          }
          RLock[] locks = clients.stream().map(c -> c.getLock(name)).toArray(RLock[]::new);
          return Locker.lockUnlock(redLock ? redLock(locks) : new RedissonMultiLock(locks));
        },
        () -> clients.forEach(RedissonClient::shutdown));
  }

  // Deprecated in Redisson 3.52.0 but still the majority variant; measured for that reason.
  @SuppressWarnings("deprecation")
  private static RLock redLock(RLock[] locks) {
    return new RedissonRedLock(locks);
  }
}
