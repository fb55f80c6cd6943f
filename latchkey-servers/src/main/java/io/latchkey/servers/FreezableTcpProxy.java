package io.latchkey.servers;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on a free loopback port that forwards every connection to one target and can freeze,
 * unfreeze and cut them, to put a client behind a network fault without touching the server.
 *
 * <pre>{@code
 * try (FreezableTcpProxy proxy = FreezableTcpProxy.start(redis.host(), redis.port())) {
 *   connect("redis://" + proxy.host() + ":" + proxy.port());
 *   proxy.freeze();      // bytes stop in both directions; connections stay open
 *   proxy.unfreeze();
 *   proxy.freezeReplies(); // requests still reach the server; its replies are held
 *   proxy.unfreeze();    // held bytes flow again, in order
 *   proxy.cut();         // every open connection is closed on both sides
 * }
 * }</pre>
 *
 * <p>While frozen, the proxy still accepts connections and reads what each side sends, but delivers
 * nothing until {@link #unfreeze()}: to both ends it looks like a network that went silent, and
 * once the socket buffers are full, senders block as they would on a real stalled link. Connections
 * accepted while frozen are held the same way. Thread-safe; every connection costs two daemon
 * threads.
 */
public final class FreezableTcpProxy implements AutoCloseable {
  private static final int BUFFER_BYTES = 16 * 1024;
  private static final int CONNECT_TIMEOUT_MS = 2_000;

  private final String targetHost;
  private final int targetPort;
  private final ServerSocket listener;
  private final Set<Link> links = ConcurrentHashMap.newKeySet();
  private final Object gate = new Object();
  private boolean frozen;
  private boolean repliesFrozen;
  private volatile boolean closed;

  /** One proxied connection: the client's socket and ours to the target. */
  private static final class Link {
    private final Socket client;
    private final Socket target;
    private final AtomicInteger endedDirections = new AtomicInteger();

    Link(Socket client, Socket target) {
      this.client = client;
      this.target = target;
    }

    /** Returns true when both directions have seen their end of input. */
    boolean directionEnded() {
      return endedDirections.incrementAndGet() == 2;
    }

    void close() {
      closeQuietly(client);
      closeQuietly(target);
    }
  }

  private FreezableTcpProxy(String targetHost, int targetPort, ServerSocket listener) {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.listener = listener;
  }

  /**
   * Starts a proxy on a free port of {@code 127.0.0.1} that forwards to {@code targetHost:
   * targetPort}. The target need not be up: a connection that cannot reach it is closed at once.
   *
   * @param targetHost the host to forward to
   * @param targetPort the port to forward to
   * @return the running proxy, not frozen
   * @throws IOException if no port can be bound
   */
  public static FreezableTcpProxy start(String targetHost, int targetPort) throws IOException {
    if (targetPort < 1 || targetPort > 65_535) {
      throw new IllegalArgumentException("not a TCP port: " + targetPort);
    }
    ServerSocket listener = new ServerSocket();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    FreezableTcpProxy proxy = new FreezableTcpProxy(targetHost, targetPort, listener);
    Thread acceptor = new Thread(proxy::acceptLoop, "tcp-proxy-" + listener.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
    return proxy;
  }

  /**
   * @return the address clients connect to, {@code 127.0.0.1}
   */
  public String host() {
    return listener.getInetAddress().getHostAddress();
  }

  /**
   * @return the port clients connect to
   */
  public int port() {
    return listener.getLocalPort();
  }

  /** Stops delivering bytes on every connection, present and future, until {@link #unfreeze()}. */
  public void freeze() {
    synchronized (gate) {
      frozen = true;
    }
  }

  /**
   * Stops delivering bytes from the target to the clients only, until {@link #unfreeze()}: requests
   * still reach the server and take effect, but their replies are held, as on a link that lost one
   * direction.
   */
  public void freezeReplies() {
    synchronized (gate) {
      repliesFrozen = true;
    }
  }

  /** Delivers the held bytes and forwards again. Does nothing if not frozen. */
  public void unfreeze() {
    synchronized (gate) {
      frozen = false;
      repliesFrozen = false;
      gate.notifyAll();
    }
  }

  /**
   * @return whether the proxy is frozen, both ways or for replies only
   */
  public boolean isFrozen() {
    synchronized (gate) {
      return frozen || repliesFrozen;
    }
  }

  /**
   * Closes every open connection on both sides, as a network that resets them would; bytes held by
   * a freeze are dropped. The proxy keeps accepting new connections, and stays frozen if it was.
   *
   * @return how many connections were cut
   */
  public int cut() {
    List<Link> open = new ArrayList<>(links);
    open.forEach(this::drop);
    synchronized (gate) {
      gate.notifyAll();
    }
    return open.size();
  }

  /**
   * @return the connections open now
   */
  public int openConnections() {
    return links.size();
  }

  /** Stops accepting and closes every connection. Idempotent. */
  @Override
  public void close() {
    closed = true;
    closeQuietly(listener);
    cut();
  }

  @Override
  public String toString() {
    return "FreezableTcpProxy["
        + host()
        + ":"
        + port()
        + " -> "
        + targetHost
        + ":"
        + targetPort
        + (isFrozen() ? ", frozen" : "")
        + "]";
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        return; // closed
      }
      Socket target = new Socket();
      try {
        client.setTcpNoDelay(true);
        target.setTcpNoDelay(true);
        target.connect(new InetSocketAddress(targetHost, targetPort), CONNECT_TIMEOUT_MS);
      } catch (IOException e) {
        closeQuietly(client);
        closeQuietly(target);
        continue;
      }
      Link link = new Link(client, target);
      links.add(link);
      if (closed) {
        drop(link);
        return;
      }
      startPump(link, client, target, false);
      startPump(link, target, client, true);
    }
  }

  private void startPump(Link link, Socket from, Socket to, boolean replies) {
    Thread pump =
        new Thread(
            () -> pump(link, from, to, replies),
            "tcp-proxy-" + port() + "-" + from.getPort() + (replies ? "down" : "up"));
    pump.setDaemon(true);
    pump.start();
  }

  /** Copies one direction; the end of input is passed on as a half-close. */
  private void pump(Link link, Socket from, Socket to, boolean replies) {
    byte[] buffer = new byte[BUFFER_BYTES];
    try {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        if (!awaitThawed(link, replies)) {
          return;
        }
        out.write(buffer, 0, n);
        out.flush();
      }
      to.shutdownOutput();
      if (link.directionEnded()) {
        drop(link);
      }
    } catch (IOException e) {
      drop(link); // reset, cut or closed
    }
  }

  /** Waits while this direction is frozen; false if the link was cut meanwhile. */
  private boolean awaitThawed(Link link, boolean replies) {
    synchronized (gate) {
      while ((frozen || (replies && repliesFrozen)) && links.contains(link)) {
        try {
          gate.wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          drop(link);
          return false;
        }
      }
      return links.contains(link);
    }
  }

  private void drop(Link link) {
    if (links.remove(link)) {
      link.close();
    }
  }

  private static void closeQuietly(AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception ignored) {
      // Closing is best effort: the peer may have reset the connection already.
    }
  }
}
