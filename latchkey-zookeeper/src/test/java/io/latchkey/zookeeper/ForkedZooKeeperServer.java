package io.latchkey.zookeeper;

import io.latchkey.testkit.process.WorkerChannel;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * The main class of a JVM that runs one ZooKeeper server, started by {@link ZooKeeperServerJvm}:
 * the server's settings read from system properties (TTL nodes, the container check interval) then
 * hold for it alone, and the test can SIGKILL or SIGSTOP it as a real server.
 *
 * <p>Arguments, {@code key=value}: {@code dataDir} (kept when the server ends, so that a restart
 * finds its data), {@code port} (a free one if missing), {@code ttlCheckMs} (if given, the server
 * takes TTL nodes and its container manager reaps every that many milliseconds; if missing, it runs
 * without TTL nodes, as servers do by default). It prints {@code SERVING {connect string}} and
 * serves until its standard input closes.
 */
final class ForkedZooKeeperServer {
  private ForkedZooKeeperServer() {}

  public static void main(String[] argv) throws Exception {
    WorkerChannel args = WorkerChannel.parse(argv);
    String ttlCheckMs = args.optional("ttlCheckMs");
    if (ttlCheckMs != null) {
      System.setProperty("zookeeper.extendedTypesEnabled", "true");
      System.setProperty("znode.container.checkIntervalMs", ttlCheckMs);
    } else if (Boolean.getBoolean("zookeeper.extendedTypesEnabled")) {
      throw new IllegalStateException(
          "a server without ttlCheckMs must run without zookeeper.extendedTypesEnabled");
    }
    InstanceSpec spec =
        new InstanceSpec(
            new File(args.required("dataDir")),
            (int) args.number("port", -1),
            -1,
            -1,
            false,
            -1,
            ZooKeeperTestServers.TICK_MILLIS,
            0);
    try (TestingServer server = new TestingServer(spec, true)) {
      System.out.println("SERVING " + server.getConnectString());
      System.out.flush();
      drain(System.in);
    }
  }

  private static void drain(InputStream in) throws IOException {
    byte[] buffer = new byte[256];
    while (in.read(buffer) >= 0) {
      // Serve until the test JVM closes the pipe.
    }
  }
}
