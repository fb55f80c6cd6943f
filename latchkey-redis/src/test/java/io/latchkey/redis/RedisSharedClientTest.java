package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.servers.RedisClusterTestServer;
import io.latchkey.servers.RedisTestServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link RedisBackend#builder}: a backend over an application's Lettuce client, on a real
 * password-protected {@code redis-server} and a real cluster. The application's client and its
 * resources outlive the latchkey client; latchkey's connections are its own.
 */
class RedisSharedClientTest {
  private static final String PASSWORD = "s3cret";
  private static final LatchkeyOptions OPTIONS =
      LatchkeyOptions.builder().closeOnShutdown(false).build();

  @RegisterExtension
  static final RedisServerExtension REDIS =
      new RedisServerExtension(() -> RedisTestServer.builder().password(PASSWORD).start());

  private static RedisTestServer server() {
    return REDIS.server();
  }

  private static RedisURI uri() {
    return RedisURI.builder()
        .withHost(server().host())
        .withPort(server().port())
        .withPassword(PASSWORD.toCharArray())
        .withClientName("application")
        .build();
  }

  @Test
  void locksGoThroughConnectionsOfLatchkeysOwnAndTheApplicationsClientOutlivesIt()
      throws Exception {
    RedisURI uri = uri();
    RedisClient application = RedisClient.create(uri);
    try (StatefulRedisConnection<String, String> before = application.connect()) {
      try (Latchkey latchkey =
          Latchkey.using(
              RedisBackend.builder(application, uri).keyPrefix("app:").build(), OPTIONS)) {
        assertThat(latchkey.backendDescription())
            .isEqualTo("redis://" + server().hostAndPort() + "?prefix=app:");
        try (Lease lease = latchkey.lock("shared/orders").acquire(Duration.ofSeconds(2))) {
          assertThat(lease.isValid()).isTrue();
          assertThat(before.sync().exists(new RedisKeys("app:").lock("shared/orders")))
              .isEqualTo(1);
        }
        // The URI's client name and credentials reached latchkey's own connections.
        assertThat(String.valueOf(server().command("CLIENT", "LIST")))
            .containsPattern("name=application(?s).*name=application(?s).*name=application");
        assertThat(latchkey.features()).contains(io.latchkey.Feature.WAKEUP_PUSH);
      }
      assertThat(before.isOpen()).isTrue();
      assertThat(before.sync().ping()).isEqualTo("PONG");
      assertThat(application.getResources().eventExecutorGroup().isShuttingDown()).isFalse();
      try (StatefulRedisConnection<String, String> after = application.connect()) {
        assertThat(after.sync().ping()).isEqualTo("PONG");
      }
    } finally {
      application.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }

  @Test
  void twoClientsOnOneApplicationClientContendForTheSameLock() throws Exception {
    RedisURI uri = uri();
    RedisClient application = RedisClient.create(uri);
    var backend = RedisBackend.builder(application, uri).build();
    try (Latchkey second = Latchkey.using(backend, OPTIONS)) {
      try (Latchkey first = Latchkey.using(backend, OPTIONS)) {
        try (Lease lease = first.lock("shared/contended").acquire(Duration.ofSeconds(2))) {
          assertThat(second.lock("shared/contended").tryLock()).isFalse();
          assertThat(lease.fencingToken()).isPositive();
        }
        try (Lease lease = second.lock("shared/contended").acquire(Duration.ofSeconds(2))) {
          assertThat(lease.isValid()).isTrue();
        }
      }
      // Closing one latchkey client leaves the other's connections (and the resources) alone.
      second.lock("shared/contended").acquire(Duration.ofSeconds(2)).release();
    } finally {
      application.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }

  @Test
  void optionsAreCheckedLikeTheUrisOptions() {
    RedisURI uri = uri();
    RedisClient application = RedisClient.create(uri);
    try {
      assertThatThrownBy(() -> RedisBackend.builder(application, uri).keyPrefix("a{b}"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("prefix must be non-empty and without '{' or '}'");
      assertThatThrownBy(
              () -> RedisBackend.builder(application, uri).waitReplicas(1, Duration.ofMinutes(2)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("waitTimeout must be above 0 and at most 1 minute");
      assertThatThrownBy(
              () -> RedisBackend.builder(application, uri).waitReplicas(-1, Duration.ofMillis(1)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("waitReplicas must be a number of replicas");
      var tooLong = RedisBackend.builder(application, uri).waitReplicas(1, Duration.ofSeconds(10));
      assertThatThrownBy(() -> Latchkey.using(tooLong.build(), OPTIONS))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("must be shorter than the operation timeout");
      assertThatThrownBy(
              () -> RedisBackend.builder(RedisClusterClient.create(uri), List.<RedisURI>of()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("at least one node");
    } finally {
      application.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }

  @Test
  void wrongCredentialsFailTheOpenClearly() {
    RedisURI wrong =
        RedisURI.builder()
            .withHost(server().host())
            .withPort(server().port())
            .withPassword("wrong".toCharArray())
            .build();
    RedisClient application = RedisClient.create(wrong);
    try {
      assertThatThrownBy(
              () -> Latchkey.using(RedisBackend.builder(application, wrong).build(), OPTIONS))
          .isInstanceOf(io.latchkey.BackendUnavailableException.class)
          .hasMessageContaining("cannot connect to redis://" + server().hostAndPort())
          .hasMessageNotContaining("wrong");
      assertThat(application.getResources().eventExecutorGroup().isShuttingDown()).isFalse();
    } finally {
      application.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }

  @Test
  void aClusterClientIsSharedTheSameWay() throws Exception {
    try (RedisClusterTestServer cluster = RedisClusterTestServer.start()) {
      List<RedisURI> seeds = new ArrayList<>();
      cluster.seedUris().forEach(seed -> seeds.add(RedisURI.create(seed)));
      RedisClusterClient application = RedisClusterClient.create(seeds);
      try {
        try (Latchkey latchkey =
            Latchkey.using(RedisBackend.builder(application, seeds).build(), OPTIONS)) {
          assertThat(latchkey.backendDescription()).startsWith("redis-cluster://");
          for (String name : List.of("cluster/a", "cluster/b", "cluster/c", "cluster/d")) {
            latchkey.lock(name).acquire(Duration.ofSeconds(2)).release();
          }
        }
        try (var connection = application.connect()) {
          assertThat(connection.sync().ping()).isEqualTo("PONG");
        }
      } finally {
        application.shutdown(0, 2, TimeUnit.SECONDS);
      }
    }
  }
}
