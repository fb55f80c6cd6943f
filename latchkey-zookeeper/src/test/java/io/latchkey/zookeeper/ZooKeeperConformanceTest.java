package io.latchkey.zookeeper;

import io.latchkey.testkit.BackendFixture;
import io.latchkey.testkit.ConformanceKit;
import java.io.IOException;
import org.apache.curator.test.TestingServer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The whole conformance kit against one in-process ZooKeeper server on a free port. */
class ZooKeeperConformanceTest extends ConformanceKit {
  private static @Nullable TestingServer server;

  @BeforeAll
  static void startZooKeeper() {
    server = ZooKeeperTestServers.start();
  }

  @AfterAll
  static void stopZooKeeper() throws IOException {
    if (server != null) {
      server.close();
    }
  }

  private static String serverUri() {
    if (server == null) {
      throw new IllegalStateException("the ZooKeeper server has not been started");
    }
    return ZooKeeperTestServers.uri(server.getConnectString(), "kit");
  }

  private static final BackendFixture ZOOKEEPER =
      ZooKeeperTestServers.fixture("zookeeper", ZooKeeperConformanceTest::serverUri);

  @Override
  protected BackendFixture fixture() {
    return ZOOKEEPER;
  }
}
