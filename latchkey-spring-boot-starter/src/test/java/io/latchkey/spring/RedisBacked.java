package io.latchkey.spring;

import io.latchkey.servers.RedisTestServer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** A test class whose application contexts share one real Redis, started for the class. */
abstract class RedisBacked {
  private static @Nullable RedisTestServer server;

  @BeforeAll
  static void startServer() {
    server = RedisTestServer.start();
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
      server = null;
    }
  }

  static RedisTestServer server() {
    if (server == null) {
      throw new IllegalStateException("the Redis server did not start");
    }
    return server;
  }
}
