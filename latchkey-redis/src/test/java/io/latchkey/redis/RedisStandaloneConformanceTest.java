package io.latchkey.redis;

import io.latchkey.servers.RedisTestServer;
import io.latchkey.testkit.BackendFixture;
import io.latchkey.testkit.ConformanceKit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The whole conformance kit against one redis-server that the test starts on a free port. */
class RedisStandaloneConformanceTest extends ConformanceKit {
  private static @Nullable RedisTestServer server;

  @BeforeAll
  static void startRedis() {
    server = RedisTestServer.start();
  }

  @AfterAll
  static void stopRedis() {
    if (server != null) {
      server.close();
    }
  }

  private static String serverUri() {
    if (server == null) {
      throw new IllegalStateException("redis-server has not been started");
    }
    return server.uri();
  }

  private static final BackendFixture REDIS =
      RedisFixtures.of("redis-standalone", RedisStandaloneConformanceTest::serverUri);

  @Override
  protected BackendFixture fixture() {
    return REDIS;
  }
}
