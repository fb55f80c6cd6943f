package io.latchkey.redis;

import io.latchkey.servers.RedisSentinelTestServer;
import io.latchkey.testkit.BackendFixture;
import io.latchkey.testkit.ConformanceKit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole conformance kit through a Sentinel deployment (master, replica, three sentinels) that
 * the test starts on free ports.
 */
class RedisSentinelConformanceTest extends ConformanceKit {
  private static @Nullable RedisSentinelTestServer sentinels;

  @BeforeAll
  static void startSentinels() {
    sentinels = RedisSentinelTestServer.start();
  }

  @AfterAll
  static void stopSentinels() {
    if (sentinels != null) {
      sentinels.close();
    }
  }

  static String sentinelUri(RedisSentinelTestServer deployment) {
    return "redis-sentinel://"
        + String.join(",", deployment.sentinelHostAndPorts())
        + "#"
        + deployment.masterName();
  }

  private static String serverUri() {
    if (sentinels == null) {
      throw new IllegalStateException("the Sentinel deployment has not been started");
    }
    return sentinelUri(sentinels);
  }

  private static final BackendFixture REDIS_SENTINEL =
      RedisFixtures.of("redis-sentinel", RedisSentinelConformanceTest::serverUri);

  @Override
  protected BackendFixture fixture() {
    return REDIS_SENTINEL;
  }
}
