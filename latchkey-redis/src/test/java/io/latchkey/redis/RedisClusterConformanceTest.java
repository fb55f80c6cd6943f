package io.latchkey.redis;

import io.latchkey.servers.RedisClusterTestServer;
import io.latchkey.testkit.BackendFixture;
import io.latchkey.testkit.ConformanceKit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole conformance kit against a Redis Cluster of three masters that the test starts on free
 * ports. Lock names hash to slots on every master.
 */
class RedisClusterConformanceTest extends ConformanceKit {
  private static @Nullable RedisClusterTestServer cluster;

  @BeforeAll
  static void startCluster() {
    cluster = RedisClusterTestServer.start();
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  static String clusterUri(RedisClusterTestServer cluster) {
    return "redis-cluster://" + String.join(",", cluster.hostAndPorts());
  }

  private static String serverUri() {
    if (cluster == null) {
      throw new IllegalStateException("the cluster has not been started");
    }
    return clusterUri(cluster);
  }

  private static final BackendFixture REDIS_CLUSTER =
      RedisFixtures.of("redis-cluster", RedisClusterConformanceTest::serverUri);

  @Override
  protected BackendFixture fixture() {
    return REDIS_CLUSTER;
  }
}
