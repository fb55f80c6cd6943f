package io.latchkey.quorum;

import io.latchkey.Feature;
import io.latchkey.testkit.BackendFixture;
import io.latchkey.testkit.ConformanceKit;
import java.net.URI;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The whole conformance kit on a quorum of three independent ZooKeeper servers: every grant's token
 * is made of the members' zxids and the offsets their fence records add
 * (docs/adr/0009-quorum-fencing.md). The quorum declares what every member offers: no explicit
 * lease times (a ZooKeeper node lives with its session) and no push wake-ups; the kit checks that
 * both are refused. Behind {@code -Psoak}, as the Redis quorum's kit: about 8 minutes on a two-core
 * machine.
 */
@Tag("slow")
class ZooKeeperQuorumConformanceTest extends ConformanceKit {
  private static final List<TestingServer> SERVERS = new ArrayList<>();

  @BeforeAll
  static void startServers() throws Exception {
    for (int i = 0; i < 3; i++) {
      SERVERS.add(new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 200, 0), true));
    }
  }

  @AfterAll
  static void stopServers() throws Exception {
    for (TestingServer server : SERVERS) {
      server.close();
    }
    SERVERS.clear();
  }

  private static String quorumUri() {
    if (SERVERS.isEmpty()) {
      throw new IllegalStateException("the ZooKeeper servers have not been started");
    }
    return "quorum:"
        + SERVERS.stream()
            .map(server -> "zookeeper://" + server.getConnectString() + "/kit?sessionTimeout=3s")
            .collect(Collectors.joining(","))
        + ";maxLease="
        + QuorumFixtures.KIT_MAX_LEASE.toMinutes()
        + "m";
  }

  private static final BackendFixture QUORUM =
      QuorumFixtures.of(
          "quorum-zookeeper-3",
          () -> Quorum.fromUri(URI.create(quorumUri())).build(),
          ZooKeeperQuorumConformanceTest::quorumUri,
          EnumSet.of(Feature.READ_WRITE_LOCK, Feature.ADMIN, Feature.PRESENCE));

  @Override
  protected BackendFixture fixture() {
    return QUORUM;
  }
}
