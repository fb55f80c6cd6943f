package io.latchkey.zookeeper;

import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingZooKeeperServer;
import org.jspecify.annotations.Nullable;

/** In-process three-server ZooKeeper ensembles for the tests, and who leads them. */
final class ZooKeeperTestEnsembles {
  /** A longer tick than the kit's: sessions of up to 20 ticks (8 s) outlive a leader election. */
  static final int TICK_MILLIS = 400;

  /**
   * The system property that sets how often the leader's container manager deletes the TTL nodes
   * whose time ran out (ZooKeeper reads it only from the system properties, not from a server's
   * configuration; the build sets it for the test JVM).
   */
  private static final String TTL_CHECK_INTERVAL = "znode.container.checkIntervalMs";

  private ZooKeeperTestEnsembles() {}

  /**
   * @return a started ensemble of three servers on free ports, every one taking TTL nodes, once one
   *     of them leads
   */
  static TestingCluster start() throws Exception {
    // The leader is found with the four-letter command "srvr".
    System.setProperty("zookeeper.4lw.commands.whitelist", "srvr");
    List<InstanceSpec> specs = new ArrayList<>();
    for (int id = 1; id <= 3; id++) {
      // A server reads an unknown configuration key as the system property "zookeeper." + key.
      Map<String, Object> ttlNodes = Map.of("extendedTypesEnabled", "true");
      specs.add(new InstanceSpec(null, -1, -1, -1, true, id, TICK_MILLIS, 0, ttlNodes));
    }
    TestingCluster ensemble = new TestingCluster(specs);
    try {
      ensemble.start();
      await().atMost(Duration.ofSeconds(60)).until(() -> leader(ensemble).isPresent());
    } catch (Exception | Error e) {
      ensemble.close();
      throw e;
    }
    return ensemble;
  }

  /**
   * @return how often the leader deletes the TTL nodes whose time ran out, as the build configures
   *     the test JVM's servers
   * @throws IllegalStateException if the build does not set it (the server's default, a minute,
   *     would keep a dead holder's TTL permit far longer than its lease)
   */
  static Duration ttlCheckInterval() {
    Integer millis = Integer.getInteger(TTL_CHECK_INTERVAL);
    if (millis == null) {
      throw new IllegalStateException("the build runs the tests with -D" + TTL_CHECK_INTERVAL);
    }
    return Duration.ofMillis(millis);
  }

  /**
   * @return the server that says it leads, asked with {@code srvr}; empty while none or several do
   */
  static Optional<InstanceSpec> leader(TestingCluster ensemble) {
    List<InstanceSpec> leaders = new ArrayList<>();
    for (TestingZooKeeperServer server : ensemble.getServers()) {
      InstanceSpec spec = server.getInstanceSpec();
      if ("leader".equals(mode(spec))) {
        leaders.add(spec);
      }
    }
    return leaders.size() == 1 ? Optional.of(leaders.get(0)) : Optional.empty();
  }

  /**
   * @return the mode a server reports to {@code srvr} ({@code leader}, {@code follower}), or null
   *     if it does not serve
   */
  static @Nullable String mode(InstanceSpec spec) {
    try (Socket socket = new Socket()) {
      socket.connect(
          new InetSocketAddress(InetAddress.getLoopbackAddress(), spec.getPort()), 1_000);
      socket.setSoTimeout(1_000);
      OutputStream out = socket.getOutputStream();
      out.write("srvr".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.startsWith("Mode: ")) {
          return line.substring("Mode: ".length()).strip();
        }
      }
      return null;
    } catch (IOException notServing) {
      return null;
    }
  }
}
