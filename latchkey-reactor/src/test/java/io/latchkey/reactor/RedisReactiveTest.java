package io.latchkey.reactor;

import io.latchkey.servers.RedisTestServer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The Reactor forms on a redis-server that the test starts on a free port. */
class RedisReactiveTest extends ReactiveContract {
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

  @Override
  String uri() {
    if (server == null) {
      throw new IllegalStateException("redis-server has not been started");
    }
    return server.uri();
  }
}
