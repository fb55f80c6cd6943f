package io.latchkey.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.Lease;
import io.latchkey.servers.RedisTestServer;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The metrics on a real Redis, and renewal failures while it is down. */
class RedisMetricsTest extends MetricsScenario {
  private static @Nullable RedisTestServer server;

  @BeforeAll
  static void startServer() {
    server = RedisTestServer.start();
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  private static RedisTestServer server() {
    if (server == null) {
      throw new IllegalStateException("the Redis server did not start");
    }
    return server;
  }

  @Override
  String uri() {
    return server().uri();
  }

  @Override
  String backendTag() {
    return "redis";
  }

  @Test
  void renewalsThatFailWhileRedisIsDownAreCounted() throws Exception {
    reconnect(Duration.ofMillis(900));
    Lease lease =
        latchkey().readWriteLock("metrics/down").writeLock().acquire(Duration.ofSeconds(5));
    server().stop();
    try {
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> count(LatchkeyMetrics.RENEWAL_FAILURES, "write_lock") >= 1);
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> count(LatchkeyMetrics.LEASES_LOST, "write_lock") == 1);
    } finally {
      server().restart();
    }
    assertThat(lease.isValid()).isFalse();
  }
}
