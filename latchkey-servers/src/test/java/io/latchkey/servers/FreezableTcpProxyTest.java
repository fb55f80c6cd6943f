package io.latchkey.servers;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class FreezableTcpProxyTest {
  private static final Duration SILENCE = Duration.ofMillis(300);

  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private ServerSocket echo;

  /** An echo server: every accepted connection gets back what it sends. */
  @BeforeEach
  void startEchoServer() throws IOException {
    echo = new ServerSocket();
    echo.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    Thread acceptor =
        new Thread(
            () -> {
              while (!echo.isClosed()) {
                try {
                  Socket accepted = echo.accept();
                  sockets.add(accepted);
                  Thread copier = new Thread(() -> echoAll(accepted));
                  copier.setDaemon(true);
                  copier.start();
                } catch (IOException e) {
                  return;
                }
              }
            });
    acceptor.setDaemon(true);
    acceptor.start();
  }

  @AfterEach
  void stopEchoServer() throws IOException {
    echo.close();
    for (Socket socket : sockets) {
      socket.close();
    }
  }

  @Test
  void forwardsBytesBothWays() throws IOException {
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", echo.getLocalPort());
        Socket client = connect(proxy)) {
      assertThat(proxy.host()).isEqualTo("127.0.0.1");
      assertThat(proxy.port()).isNotEqualTo(echo.getLocalPort());
      assertEchoes(client, "hello");
      assertEchoes(client, "again");
      assertThat(proxy.openConnections()).isEqualTo(1);
    }
  }

  @Test
  void aFrozenProxyHoldsBytesUntilItIsUnfrozen() throws IOException {
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", echo.getLocalPort());
        Socket client = connect(proxy)) {
      assertEchoes(client, "warm");

      proxy.freeze();
      assertThat(proxy.isFrozen()).isTrue();
      send(client, "held");
      assertNothingArrives(client);

      proxy.unfreeze();
      assertThat(proxy.isFrozen()).isFalse();
      assertThat(receive(client, 4)).isEqualTo("held");
    }
  }

  @Test
  void freezingRepliesLetsRequestsThroughAndHoldsTheAnswers() throws Exception {
    List<String> received = new CopyOnWriteArrayList<>();
    try (ServerSocket sink = new ServerSocket()) {
      sink.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      Thread server =
          new Thread(
              () -> {
                try (Socket accepted = sink.accept()) {
                  byte[] request = accepted.getInputStream().readNBytes(3);
                  received.add(new String(request, UTF_8));
                  send(accepted, "ack");
                  accepted.getInputStream().read(); // until the client closes
                } catch (IOException e) {
                  received.add("failed: " + e);
                }
              });
      server.setDaemon(true);
      server.start();
      try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", sink.getLocalPort());
          Socket client = connect(proxy)) {
        proxy.freezeReplies();
        assertThat(proxy.isFrozen()).isTrue();
        send(client, "req");
        await().atMost(Duration.ofSeconds(5)).until(() -> received.contains("req"));
        assertNothingArrives(client);
        proxy.unfreeze();
        assertThat(receive(client, 3)).isEqualTo("ack");
      }
    }
  }

  @Test
  void connectionsOpenedWhileFrozenAreHeldToo() throws IOException {
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", echo.getLocalPort())) {
      proxy.freeze();
      try (Socket client = connect(proxy)) {
        send(client, "late");
        assertNothingArrives(client);
        proxy.unfreeze();
        assertThat(receive(client, 4)).isEqualTo("late");
      }
    }
  }

  @Test
  void cutClosesEveryOpenConnectionButAcceptsNewOnes() throws IOException {
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", echo.getLocalPort());
        Socket first = connect(proxy);
        Socket second = connect(proxy)) {
      send(first, "a");
      send(second, "b");
      assertThat(receive(first, 1)).isEqualTo("a");
      assertThat(receive(second, 1)).isEqualTo("b");

      assertThat(proxy.cut()).isEqualTo(2);
      assertThat(proxy.openConnections()).isZero();
      assertClosedByPeer(first);
      assertClosedByPeer(second);

      try (Socket third = connect(proxy)) {
        assertEchoes(third, "c");
      }
    }
  }

  @Test
  void cutWhileFrozenDropsTheHeldBytes() throws IOException {
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", echo.getLocalPort());
        Socket client = connect(proxy)) {
      assertEchoes(client, "x");
      proxy.freeze();
      send(client, "lost");
      assertThat(proxy.cut()).isEqualTo(1);
      assertClosedByPeer(client);
    }
  }

  @Test
  void aConnectionToADownTargetIsClosedAtOnce() throws IOException {
    int deadPort = echo.getLocalPort();
    echo.close();
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", deadPort);
        Socket client = connect(proxy)) {
      assertClosedByPeer(client);
      assertThat(proxy.openConnections()).isZero();
    }
  }

  @Test
  void aClientThatClosesIsForgotten() throws IOException {
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", echo.getLocalPort())) {
      try (Socket client = connect(proxy)) {
        assertEchoes(client, "bye");
      }
      await().atMost(Duration.ofSeconds(5)).until(() -> proxy.openConnections() == 0);
    }
  }

  @Test
  void closeCutsEveryConnectionAndIsIdempotent() throws IOException {
    FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", echo.getLocalPort());
    try (Socket client = connect(proxy)) {
      assertEchoes(client, "hi");
      proxy.close();
      proxy.close();
      assertClosedByPeer(client);
      assertThat(proxy.openConnections()).isZero();
    }
  }

  @Test
  void aDelayingProxyHoldsEachDirectionForItsDelay() throws IOException {
    Duration delay = Duration.ofMillis(150);
    try (FreezableTcpProxy proxy =
            FreezableTcpProxy.start("127.0.0.1", echo.getLocalPort(), delay);
        Socket client = connect(proxy)) {
      assertThat(proxy.toString()).contains("delay");
      long started = System.nanoTime();
      send(client, "slow");
      send(client, "-and-in-order");
      assertThat(receive(client, 17)).isEqualTo("slow-and-in-order");
      // A lower bound only: the delay is the proxy's contract; how much more it takes is not.
      assertThat(Duration.ofNanos(System.nanoTime() - started))
          .isGreaterThanOrEqualTo(delay.multipliedBy(2));
    }
  }

  @Test
  void aDelayingProxyFreezesAndPassesOnTheEndOfInput() throws IOException {
    try (FreezableTcpProxy proxy =
            FreezableTcpProxy.start("127.0.0.1", echo.getLocalPort(), Duration.ofMillis(20));
        Socket client = connect(proxy)) {
      assertEchoes(client, "warm");
      proxy.freeze();
      send(client, "held");
      assertNothingArrives(client);
      proxy.unfreeze();
      assertThat(receive(client, 4)).isEqualTo("held");

      client.shutdownOutput(); // the echo server ends its side in turn
      assertClosedByPeer(client);
      await().atMost(Duration.ofSeconds(5)).until(() -> proxy.openConnections() == 0);
    }
  }

  @Test
  void refusesANegativeDelay() {
    assertThatThrownBy(
            () -> FreezableTcpProxy.start("127.0.0.1", echo.getLocalPort(), Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void refusesABadPort() {
    assertThatThrownBy(() -> FreezableTcpProxy.start("127.0.0.1", 0))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private Socket connect(FreezableTcpProxy proxy) throws IOException {
    Socket socket = new Socket(proxy.host(), proxy.port());
    socket.setSoTimeout(5_000);
    return socket;
  }

  private static void assertEchoes(Socket socket, String text) throws IOException {
    send(socket, text);
    assertThat(receive(socket, text.length())).isEqualTo(text);
  }

  private static void send(Socket socket, String text) throws IOException {
    OutputStream out = socket.getOutputStream();
    out.write(text.getBytes(UTF_8));
    out.flush();
  }

  private static String receive(Socket socket, int length) throws IOException {
    byte[] bytes = socket.getInputStream().readNBytes(length);
    return new String(bytes, UTF_8);
  }

  /** Nothing comes back for a while; the socket then waits up to 5 s again. */
  private static void assertNothingArrives(Socket client) throws IOException {
    client.setSoTimeout((int) SILENCE.toMillis());
    assertThatThrownBy(() -> client.getInputStream().read())
        .isInstanceOf(SocketTimeoutException.class);
    client.setSoTimeout(5_000);
  }

  /** The proxy closed its side: a read ends or the connection is reset. */
  private static void assertClosedByPeer(Socket socket) {
    try {
      assertThat(socket.getInputStream().read()).isEqualTo(-1);
    } catch (IOException e) {
      assertThat(e).isNotInstanceOf(SocketTimeoutException.class);
    }
  }

  private static void echoAll(Socket socket) {
    byte[] buffer = new byte[1024];
    try (socket) {
      InputStream in = socket.getInputStream();
      OutputStream out = socket.getOutputStream();
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // The peer went away.
    }
  }
}
