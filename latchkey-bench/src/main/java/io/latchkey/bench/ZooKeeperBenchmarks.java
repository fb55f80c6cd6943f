package io.latchkey.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Version;
import org.apache.zookeeper.data.Stat;

/**
 * Issue 10's comparison: latchkey's ZooKeeper backend beside Curator's {@link InterProcessMutex} on
 * the same ZooKeeper server, an in-process curator-test {@link TestingServer} that it starts itself
 * on a free loopback port (never the machine's ZooKeeper).
 *
 * <ul>
 *   <li>{@code Latchkey}: {@code Latchkey.connect("zookeeper://…/latchkey-bench")}, {@code
 *       lock()}/{@code unlock()}, one client for all threads.
 *   <li>{@code Curator}: one {@code CuratorFramework} for all threads, an {@code InterProcessMutex}
 *       per thread on the lock's path, {@code acquire()}/{@code release()}.
 * </ul>
 *
 * <p>Writes are counted as ZooKeeper transactions: every write (a create, a delete, a multi-op)
 * gets the next zxid, so the difference between the zxids of two marker nodes, less one, is the
 * number of writes made in between by anyone (sessions' own creations and closings included; none
 * happen in a window). The floor of a lock cycle is two: one create, one delete.
 *
 * <pre>
 * java -cp latchkey-bench/target/latchkey-benchmarks.jar io.latchkey.bench.ZooKeeperBenchmarks \
 *     [--rounds 2] [--settle 2] [--window 5] [--paired 12] [--threads 8] [--quick] [--out DIR]
 * </pre>
 */
public final class ZooKeeperBenchmarks {
  private static final String TAG = "zookeeper-bench";
  private static final String LATCHKEY = "Latchkey";
  private static final String CURATOR = "Curator";
  private static final String PROBE_PATH = "/zxid-probe/mark-";
  private static final String WRITES = "ZooKeeper writes";
  private static final String REQUESTS = "requests";

  private ZooKeeperBenchmarks() {}

  /**
   * Runs the comparison and prints the report.
   *
   * @param args see the class comment
   * @throws Exception if a benchmark fails
   */
  public static void main(String[] args) throws Exception {
    PeerComparison.Settings settings = PeerComparison.Settings.parse(args, "zookeeper-benchmark");
    PeerComparison.Start start = PeerComparison.Start.now();
    // srvr tells how many requests the server received.
    System.setProperty("zookeeper.4lw.commands.whitelist", "srvr");
    // Unlimited connections per address; the server's default tick.
    try (TestingServer server =
            new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, -1, 0), true);
        CuratorFramework probe = curator(server.getConnectString())) {
      List<PeerComparison.Peer> peers = new ArrayList<>();
      try {
        compare(settings, start, server, probe, peers);
      } finally {
        // Before the server stops, so that no client is left reconnecting.
        peers.forEach(PeerComparison.Peer::close);
      }
    }
  }

  private static void compare(
      PeerComparison.Settings settings,
      PeerComparison.Start start,
      TestingServer server,
      CuratorFramework probe,
      List<PeerComparison.Peer> peers)
      throws Exception {
    PeerComparison.log(
        TAG, "ZooKeeper " + Version.getFullVersion() + " at " + server.getConnectString());
    List<PeerComparison.ServerCounter> counters =
        List.of(writes(probe), requests(server.getPort()));
    for (PeerComparison.ServerCounter counter : counters) {
      counter.read();
    }
    peers.add(
        PeerComparison.latchkey(
            LATCHKEY, "zookeeper://" + server.getConnectString() + "/latchkey-bench"));
    CuratorFramework curator = curator(server.getConnectString());
    peers.add(
        PeerComparison.Peer.of(
            CURATOR,
            name -> curatorLocker(new InterProcessMutex(curator, "/curator-bench/" + name)),
            curator::close));
    PeerComparison.Shape oneLock =
        new PeerComparison.Shape(settings.threads + " threads, one lock", settings.threads, false);
    PeerComparison.Shape lockEach =
        new PeerComparison.Shape(
            settings.threads + " threads, a lock each", settings.threads, true);
    PeerComparison.Results results =
        PeerComparison.run(TAG, peers, List.of(oneLock, lockEach), settings, counters);
    String body =
        PeerComparison.tables(results) + "\n" + targets(results, oneLock, lockEach, settings);
    PeerComparison.finish(
        TAG,
        settings,
        "zookeeper-benchmark.md",
        start,
        List.of(
            "ZooKeeper " + Version.getFullVersion(),
            "Curator " + RedisBenchmarks.mavenVersion("org.apache.curator", "curator-recipes")),
        body);
  }

  /** Writes: the zxid of a new marker node; each marker is one write of its own. */
  private static PeerComparison.ServerCounter writes(CuratorFramework probe) {
    return new PeerComparison.ServerCounter() {
      @Override
      public String unit() {
        return WRITES;
      }

      @Override
      public long read() throws Exception {
        String created =
            probe
                .create()
                .creatingParentsIfNeeded()
                .withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                .forPath(PROBE_PATH);
        Stat stat = probe.checkExists().forPath(created);
        if (stat == null) {
          throw new IllegalStateException(created + " is gone");
        }
        return stat.getCzxid();
      }

      @Override
      public long overhead() {
        return 1;
      }
    };
  }

  /**
   * Requests: the server's count of packets received ({@code srvr}), which counts every request of
   * every client (reads, writes, and the sessions' pings: a few per second, next to hundreds of
   * cycles). The writes counter's marker and its read, two requests, fall into each interval.
   */
  private static PeerComparison.ServerCounter requests(int port) {
    return new PeerComparison.ServerCounter() {
      @Override
      public String unit() {
        return REQUESTS;
      }

      @Override
      public long read() throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
          socket.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
          socket.getOutputStream().flush();
          String reply =
              new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
          for (String line : reply.split("\n", -1)) {
            if (line.startsWith("Received:")) {
              return Long.parseLong(line.substring("Received:".length()).trim());
            }
          }
          throw new IllegalStateException("no Received: line in srvr's reply: " + reply);
        }
      }

      @Override
      public long overhead() {
        return 2;
      }
    };
  }

  private static CuratorFramework curator(String connectString) {
    CuratorFramework client =
        CuratorFrameworkFactory.newClient(connectString, new ExponentialBackoffRetry(100, 3));
    client.start();
    return client;
  }

  private static Locker curatorLocker(InterProcessMutex mutex) {
    return new Locker() {
      @Override
      public void acquire() throws Exception {
        if (!mutex.acquire(WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
          throw new IllegalStateException("Curator did not grant the lock in " + WAIT);
        }
      }

      @Override
      public void release() throws Exception {
        mutex.release();
      }
    };
  }

  private static String targets(
      PeerComparison.Results results,
      PeerComparison.Shape oneLock,
      PeerComparison.Shape lockEach,
      PeerComparison.Settings settings) {
    StringBuilder out = PeerComparison.targetsTable("issue 10");
    out.append(
        PeerComparison.latencyTarget(
            "uncontended latency ≤ 1.0× Curator",
            results.paired(LATCHKEY),
            results.paired(CURATOR),
            1.0));
    double ourWrites = results.uncontendedCounts.getOrDefault(LATCHKEY, List.of(Double.NaN)).get(0);
    double theirWrites =
        results.uncontendedCounts.getOrDefault(CURATOR, List.of(Double.NaN)).get(0);
    out.append(
        String.format(
            Locale.ROOT,
            "| uncontended writes per cycle: the floor is 2 (one create, one delete) | %.2f"
                + " (Curator %.2f) | %s |%n",
            ourWrites,
            theirWrites,
            ourWrites <= 2.0 ? "met" : "**missed**"));
    out.append(
        row(
            "one lock: throughput ≥ Curator, per round",
            results,
            oneLock,
            settings,
            ContendedWindow.Result::throughput,
            "%.0f vs %.0f cycles/s (%.2f×)",
            true));
    out.append(
        row(
            "one lock: fairness (min/max grants per thread), per round",
            results,
            oneLock,
            settings,
            ContendedWindow.Result::fairness,
            "%.2f vs %.2f (%.2f×)",
            false));
    out.append(
        row(
            "a lock each: throughput (reported), per round",
            results,
            lockEach,
            settings,
            ContendedWindow.Result::throughput,
            "%.0f vs %.0f cycles/s (%.2f×)",
            false));
    return out.toString();
  }

  private static String row(
      String target,
      PeerComparison.Results results,
      PeerComparison.Shape shape,
      PeerComparison.Settings settings,
      ToDoubleFunction<ContendedWindow.Result> measure,
      String format,
      boolean judged) {
    boolean met = true;
    List<String> rounds = new ArrayList<>();
    for (int round : IntStream.rangeClosed(1, settings.rounds).toArray()) {
      double ours = measure.applyAsDouble(results.window(shape, LATCHKEY, round));
      double theirs = measure.applyAsDouble(results.window(shape, CURATOR, round));
      met &= ours >= theirs;
      rounds.add(String.format(Locale.ROOT, format, ours, theirs, ours / theirs));
    }
    return String.format(
        Locale.ROOT,
        "| %s | %s | %s |%n",
        target,
        rounds.stream().collect(Collectors.joining("; ")),
        judged ? (met ? "met" : "**missed**") : "-");
  }
}
