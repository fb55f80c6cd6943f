package io.latchkey.zookeeper;

import java.io.IOException;
import java.io.InputStream;
import org.apache.curator.test.TestingServer;

/**
 * The main class of a JVM that runs one ZooKeeper server without TTL nodes, as servers run by
 * default: the test JVM turns them on for every server in it (a system property), so a server
 * without them needs a JVM of its own. It prints {@code SERVING {connect string}} and serves until
 * its standard input closes.
 */
final class PlainZooKeeperServer {
  private PlainZooKeeperServer() {}

  public static void main(String[] args) throws Exception {
    if (Boolean.getBoolean("zookeeper.extendedTypesEnabled")) {
      throw new IllegalStateException(
          "this server must run without zookeeper.extendedTypesEnabled");
    }
    try (TestingServer server = ZooKeeperTestServers.start()) {
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
