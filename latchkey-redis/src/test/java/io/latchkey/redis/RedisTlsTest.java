package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.BackendUnavailableException;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.servers.RedisTestServer;
import io.latchkey.spi.ResourceType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Redis backend over TLS, against a redis-server that speaks TLS only and whose certificate is
 * signed by a throwaway CA that no JVM trust store holds.
 */
class RedisTlsTest {
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(1);
  private static @Nullable RedisTestServer server;

  private final List<AutoCloseable> opened = new ArrayList<>();

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

  @AfterEach
  void closeClients() throws Exception {
    for (AutoCloseable closeable : opened) {
      closeable.close();
    }
  }

  private static RedisTestServer redis() {
    RedisTestServer started = server;
    if (started == null) {
      throw new IllegalStateException("redis-server has not been started");
    }
    return started;
  }

  /** The server's TLS URI trusting its CA, with more options after {@code &}. */
  static String trustingUri(RedisTestServer server, String moreOptions) {
    return server.tlsUri()
        + "?trustedCertificates="
        + server.caCertificate().toUri().getRawPath()
        + moreOptions;
  }

  private static LatchkeyOptions.Builder options() {
    return LatchkeyOptions.builder()
        .leaseTime(Duration.ofSeconds(2))
        .renewInterval(Duration.ofMillis(300))
        .operationTimeout(OPERATION_TIMEOUT)
        .recheckInterval(Duration.ofMillis(200))
        .closeOnShutdown(false);
  }

  private Latchkey connect(String uri) {
    return connect(uri, UnaryOperator.identity());
  }

  private Latchkey connect(String uri, UnaryOperator<LatchkeyOptions.Builder> tweaks) {
    Latchkey client = Latchkey.connect(uri, tweaks.apply(options()).build());
    opened.add(client);
    return client;
  }

  @Test
  void trustingTheCaLocksWakesWaitersAndFences() throws Exception {
    String uri = trustingUri(redis(), "");
    String name = "tls/" + System.nanoTime();
    RedisKeys keys = new RedisKeys(RedisConnectionSettings.DEFAULT_PREFIX);
    Latchkey holder = connect(uri, o -> o.leaseTime(Duration.ofMinutes(1)));
    Latchkey waiter =
        connect(
            uri,
            o -> o.recheckInterval(Duration.ofSeconds(30)).queueKeepAlive(Duration.ofSeconds(90)));
    assertThat(holder.backendDescription()).isEqualTo("rediss://" + redis().hostAndPort());

    Lease held = holder.lock(name).acquire(Duration.ZERO);
    long firstToken = held.fencingToken();
    CompletableFuture<Lease> waiting =
        waiter.lock(name).acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                ((List<?>)
                        Objects.requireNonNull(
                            redis()
                                .command(
                                    "PUBSUB", "NUMSUB", keys.wakeups(ResourceType.LOCK, name))))
                    .get(1)
                    .equals(1L));
    long released = System.nanoTime();
    held.release();

    // Woken by the release over pub/sub, far sooner than the 30 s recheck.
    Lease granted = waiting.get(5, TimeUnit.SECONDS);
    assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(Duration.ofSeconds(5));
    assertThat(granted.isValid()).isTrue();
    assertThat(granted.fencingToken()).isGreaterThan(firstToken);
    granted.release();

    try (Lease again = holder.lock(name).acquire(Duration.ZERO)) {
      assertThat(again.fencingToken()).isGreaterThan(granted.fencingToken());
    }
  }

  @Test
  void verifyPeerNoneNeedsNoCa() throws InterruptedException {
    Latchkey client = connect(redis().tlsUri() + "?verifyPeer=none");
    try (Lease lease = client.lock("tls/none/" + System.nanoTime()).acquire(Duration.ZERO)) {
      assertThat(lease.isValid()).isTrue();
    }
  }

  @Test
  void anUntrustedCertificateIsRefusedQuicklyAndSaysSo() {
    long start = System.nanoTime();
    assertThatThrownBy(() -> connect(redis().tlsUri()))
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining("cannot connect to " + redis().tlsUri())
        .hasMessageContaining("TLS handshake failed")
        .hasMessageContaining("certificate")
        .hasMessageContaining("trustedCertificates=")
        .message()
        .doesNotContain("\n");
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isLessThan(OPERATION_TIMEOUT.plusSeconds(2));
  }

  @Test
  void plainTextToTheTlsPortFailsClearly() {
    String plain = "redis://" + redis().hostAndPort();
    long start = System.nanoTime();
    assertThatThrownBy(() -> connect(plain))
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining("cannot connect to " + plain)
        .hasMessageContaining("speaks TLS only, use rediss://")
        .message()
        .doesNotContain("\n");
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isLessThan(OPERATION_TIMEOUT.plusSeconds(3));
  }
}
