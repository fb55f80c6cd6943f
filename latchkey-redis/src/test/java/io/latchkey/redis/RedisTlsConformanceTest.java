package io.latchkey.redis;

import io.latchkey.servers.RedisTestServer;
import io.latchkey.testkit.BackendFixture;
import io.latchkey.testkit.ConformanceKit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole conformance kit over TLS: one redis-server that speaks TLS only, reached with {@code
 * rediss://} trusting the server's throwaway CA through {@code trustedCertificates}.
 */
class RedisTlsConformanceTest extends ConformanceKit {
  private static @Nullable RedisTestServer server;

  @BeforeAll
  static void startRedis() {
    server = RedisTestServer.builder().tls().start();
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
    return RedisTlsTest.trustingUri(server, "");
  }

  private static final BackendFixture REDIS =
      RedisFixtures.of("redis-tls", RedisTlsConformanceTest::serverUri);

  @Override
  protected BackendFixture fixture() {
    return REDIS;
  }
}
