package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.latchkey.BackendUnavailableException;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.servers.RedisTestServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every connect is bounded by the operation timeout, on every topology, even against a peer that
 * accepts connections and never answers (a frozen server, a wrong port, a proxy without backend).
 * The bound is asserted with a generous margin: the point is boundedness, not speed.
 */
class RedisConnectBoundTest {
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(2);
  private static final Duration MARGIN = Duration.ofMillis(1500);

  private ServerSocket silent;
  private final List<Socket> accepted = new CopyOnWriteArrayList<>();

  @BeforeEach
  void startSilentPeer() throws IOException {
    silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor =
        new Thread(
            () -> {
              try {
                while (true) {
                  accepted.add(silent.accept()); // kept open, never read, never answered
                }
              } catch (IOException closed) {
                // the test is over
              }
            },
            "silent-peer");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  @AfterEach
  void stopSilentPeer() throws IOException {
    silent.close();
    for (Socket socket : accepted) {
      socket.close();
    }
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "redis://127.0.0.1:%d",
        "rediss://127.0.0.1:%d?verifyPeer=none",
        "redis-sentinel://127.0.0.1:%d#mymaster",
        "redis-cluster://127.0.0.1:%d"
      })
  void aPeerThatNeverAnswersFailsTheConnectWithinTheOperationTimeout(String form) {
    String uri = String.format(form, silent.getLocalPort());

    BackendUnavailableException failure = connectFails(uri);

    assertThat(failure.getMessage())
        .startsWith("cannot connect to " + uri.replace("?verifyPeer=none", ""))
        .contains("no answer within 2000 ms")
        .doesNotContain("null")
        .doesNotContain("\n");
    if (uri.startsWith("rediss:")) {
      assertThat(failure.getMessage()).contains("use redis://");
    }
  }

  @Test
  void tlsToAPlainPortSaysSo() {
    try (RedisTestServer plain = RedisTestServer.start()) {
      BackendUnavailableException failure =
          connectFails("rediss://" + plain.hostAndPort() + "?verifyPeer=none");

      assertThat(failure.getMessage())
          .contains("use redis://")
          .doesNotContain("null:")
          .doesNotContain("\n");
    }
  }

  private static BackendUnavailableException connectFails(String uri) {
    long start = System.nanoTime();
    BackendUnavailableException failure =
        catchThrowableOfType(
            BackendUnavailableException.class,
            () ->
                Latchkey.connect(
                        uri,
                        LatchkeyOptions.builder()
                            .operationTimeout(OPERATION_TIMEOUT)
                            .closeOnShutdown(false)
                            .build())
                    .close());
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertThat(failure).as("connect to %s fails", uri).isNotNull();
    assertThat(took).as("connect to %s", uri).isLessThan(OPERATION_TIMEOUT.plus(MARGIN));
    return failure;
  }
}
