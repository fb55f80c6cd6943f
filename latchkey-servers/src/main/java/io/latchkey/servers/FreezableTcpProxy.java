package io.latchkey.servers;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

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
 * <p>{@link #start(String, int, Duration)} also delays every byte by a fixed time in each
 * direction, as a network with that one-way latency would (a round trip through it takes twice the
 * delay more than without it); bytes that follow each other closely stay as close, so pipelined
 * requests are not delayed one after the other. Freezing works the same on a delaying proxy.
 *
 * <p>While frozen, the proxy still accepts connections and reads what each side sends, but delivers
 * nothing until {@link #unfreeze()}: to both ends it looks like a network that went silent, and
 * once the socket buffers are full, senders block as they would on a real stalled link. Connections
 * accepted while frozen are held the same way. Thread-safe; every connection costs two daemon
 * threads, four on a delaying proxy.
 */
public final class FreezableTcpProxy implements AutoCloseable {
  private static final int BUFFER_BYTES = 16 * 1024;
  private static final int CONNECT_TIMEOUT_MS = 2_000;
  // A delaying proxy's chunks in flight per direction; a full line blocks the reader, as a full
  // socket buffer blocks the sender.
  private static final int DELAY_LINE_CHUNKS = 256;

  private final String targetHost;
  private final int targetPort;
  private final long delayNanos;
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

  /** Bytes read from one side at {@code readNanos}; an empty chunk marks the end of input. */
  private static final class Chunk {
    final byte[] bytes;
    final long readNanos;

    Chunk(byte[] bytes, long readNanos) {
      this.bytes = bytes;
      this.readNanos = readNanos;
    }
  }

  private FreezableTcpProxy(
      String targetHost, int targetPort, long delayNanos, ServerSocket listener) {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.delayNanos = delayNanos;
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
    return start(targetHost, targetPort, Duration.ZERO);
  }

  /**
   * Starts a proxy like {@link #start(String, int)} that also holds every byte for {@code
   * oneWayDelay} in each direction before passing it on: a link with that latency (the machine's
   * scheduler adds its own tens of microseconds).
   *
   * @param targetHost the host to forward to
   * @param targetPort the port to forward to
   * @param oneWayDelay how long each byte is held in each direction; zero for none
   * @return the running proxy, not frozen
   * @throws IOException if no port can be bound
   */
  public static FreezableTcpProxy start(String targetHost, int targetPort, Duration oneWayDelay)
      throws IOException {
    if (targetPort < 1 || targetPort > 65_535) {
      throw new IllegalArgumentException("not a TCP port: " + targetPort);
    }
    if (oneWayDelay.isNegative() || oneWayDelay.compareTo(Duration.ofMinutes(1)) > 0) {
      throw new IllegalArgumentException(
          "a proxy's one-way delay must be between 0 and 1 minute, was " + oneWayDelay);
    }
    ServerSocket listener = new ServerSocket();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    FreezableTcpProxy proxy =
        new FreezableTcpProxy(targetHost, targetPort, oneWayDelay.toNanos(), listener);
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
        + (delayNanos > 0 ? ", delay " + Duration.ofNanos(delayNanos) : "")
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
    String name = "tcp-proxy-" + port() + "-" + from.getPort() + (replies ? "down" : "up");
    if (delayNanos == 0) {
      startThread(name, () -> pump(link, from, to, replies));
      return;
    }
    BlockingQueue<Chunk> line = new LinkedBlockingQueue<>(DELAY_LINE_CHUNKS);
    startThread(name, () -> read(link, from, line));
    startThread(name + "-delayed", () -> deliverDelayed(link, line, to, replies));
  }

  private static void startThread(String name, Runnable body) {
    Thread thread = new Thread(body, name);
    thread.setDaemon(true);
    thread.start();
  }

  /** Copies one direction; the end of input is passed on as a half-close. */
  private void pump(Link link, Socket from, Socket to, boolean replies) {
    byte[] buffer = new byte[BUFFER_BYTES];
    try {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        if (!deliver(link, out, buffer, n, replies)) {
          return;
        }
      }
      end(link, to);
    } catch (IOException e) {
      drop(link); // reset, cut or closed
    }
  }

  /** Writes one chunk once this direction is not frozen; false if the link was cut meanwhile. */
  private boolean deliver(Link link, OutputStream out, byte[] bytes, int n, boolean replies)
      throws IOException {
    if (!awaitThawed(link, replies)) {
      return false;
    }
    out.write(bytes, 0, n);
    out.flush();
    return true;
  }

  private void end(Link link, Socket to) throws IOException {
    to.shutdownOutput();
    if (link.directionEnded()) {
      drop(link);
    }
  }

  /**
   * A delaying proxy's reading half of one direction: stamps each chunk with the time it was read,
   * so that the delivering half holds every chunk for the delay from its own arrival, not from the
   * delivery of the one before.
   */
  private void read(Link link, Socket from, BlockingQueue<Chunk> line) {
    byte[] buffer = new byte[BUFFER_BYTES];
    try {
      InputStream in = from.getInputStream();
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        line.put(new Chunk(Arrays.copyOf(buffer, n), System.nanoTime()));
      }
      line.put(new Chunk(new byte[0], System.nanoTime()));
    } catch (IOException e) {
      drop(link); // reset, cut or closed
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      drop(link);
    }
  }

  /** A delaying proxy's delivering half of one direction. */
  private void deliverDelayed(Link link, BlockingQueue<Chunk> line, Socket to, boolean replies) {
    try {
      OutputStream out = to.getOutputStream();
      while (links.contains(link)) {
        Chunk chunk = line.poll(100, TimeUnit.MILLISECONDS);
        if (chunk == null) {
          continue;
        }
        long due = chunk.readNanos + delayNanos;
        for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
          LockSupport.parkNanos(wait);
        }
        if (chunk.bytes.length == 0) {
          end(link, to);
          return;
        }
        if (!deliver(link, out, chunk.bytes, chunk.bytes.length, replies)) {
          return;
        }
      }
    } catch (IOException e) {
      drop(link);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      drop(link);
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
