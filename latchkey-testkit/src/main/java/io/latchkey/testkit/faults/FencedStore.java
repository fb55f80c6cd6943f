package io.latchkey.testkit.faults;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The resource the fault suite's workers protect with the lock: a small TCP service in the harness
 * JVM with a fenced register and an unfenced counter.
 *
 * <p>The register accepts {@code WRITE <token> <worker>} only if the token is greater than the last
 * one it accepted, and otherwise refuses it; every write, accepted or refused, is recorded with the
 * time it arrived ({@link System#nanoTime()}, comparable with the workers' times on one Linux
 * host). The counter is read and written in two steps ({@code GET}, then {@code SET <value>
 * <worker>}), so two workers in the critical section at once lose an update.
 *
 * <p>Protocol, one line per request and reply: {@code WRITE t w} → {@code OK} or {@code REFUSED
 * <last accepted>}; {@code GET} → {@code VALUE <n>}; {@code SET n w} → {@code OK}. Thread-safe.
 */
public final class FencedStore implements AutoCloseable {
  /**
   * One write that reached the register.
   *
   * @param atNanos when it arrived
   * @param token the fencing token it carried
   * @param worker the worker that sent it
   * @param accepted whether the register took it
   * @param lastAcceptedBefore the highest token accepted before it ({@code Long.MIN_VALUE} if none)
   */
  public record Write(
      long atNanos, long token, int worker, boolean accepted, long lastAcceptedBefore) {}

  private final ServerSocket listener;
  private final Set<Socket> clients = ConcurrentHashMap.newKeySet();
  private final List<Write> writes = new ArrayList<>();
  private long lastAccepted = Long.MIN_VALUE;
  private long counter;
  private long sets;
  private volatile boolean closed;

  private FencedStore(ServerSocket listener) {
    this.listener = listener;
  }

  /**
   * Starts the store on a free loopback port.
   *
   * @return the running store, empty
   * @throws IOException if no port can be bound
   */
  public static FencedStore start() throws IOException {
    ServerSocket listener = new ServerSocket();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    FencedStore store = new FencedStore(listener);
    Thread acceptor = new Thread(store::acceptLoop, "fenced-store-" + listener.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
    return store;
  }

  /**
   * @return the loopback port workers connect to
   */
  public int port() {
    return listener.getLocalPort();
  }

  /**
   * Applies a fenced write.
   *
   * @param token the writer's fencing token
   * @param worker the writer
   * @return whether it was accepted
   */
  public synchronized boolean write(long token, int worker) {
    boolean accepted = token > lastAccepted;
    writes.add(new Write(System.nanoTime(), token, worker, accepted, lastAccepted));
    if (accepted) {
      lastAccepted = token;
    }
    return accepted;
  }

  /**
   * @return every write so far, in arrival order
   */
  public synchronized List<Write> writes() {
    return List.copyOf(writes);
  }

  /**
   * @return the counter's value
   */
  public synchronized long counter() {
    return counter;
  }

  /**
   * @return how many {@code SET}s the counter received: with mutual exclusion, its value
   */
  public synchronized long sets() {
    return sets;
  }

  private synchronized void set(long value) {
    counter = value;
    sets++;
  }

  /** Stops accepting and closes every connection. */
  @Override
  public void close() {
    closed = true;
    try {
      listener.close();
    } catch (IOException ignored) {
      // Nothing to do: the port is freed either way.
    }
    for (Socket client : clients) {
      try {
        client.close();
      } catch (IOException ignored) {
        // The worker went away first.
      }
    }
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket client = listener.accept();
        client.setTcpNoDelay(true);
        clients.add(client);
        Thread serving = new Thread(() -> serve(client), "fenced-store-client");
        serving.setDaemon(true);
        serving.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket client) {
    try (client;
        BufferedReader in =
            new BufferedReader(
                new InputStreamReader(client.getInputStream(), StandardCharsets.UTF_8));
        Writer out = new OutputStreamWriter(client.getOutputStream(), StandardCharsets.UTF_8)) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        out.write(answer(line.trim().split(" ")));
        out.write('\n');
        out.flush();
      }
    } catch (IOException | RuntimeException e) {
      // A killed worker resets its connection; a malformed request ends it.
    } finally {
      clients.remove(client);
    }
  }

  private String answer(String[] request) {
    return switch (request[0]) {
      case "WRITE" -> {
        long token = Long.parseLong(request[1]);
        if (write(token, Integer.parseInt(request[2]))) {
          yield "OK";
        }
        synchronized (this) {
          yield "REFUSED " + lastAccepted;
        }
      }
      case "GET" -> "VALUE " + counter();
      case "SET" -> {
        set(Long.parseLong(request[1]));
        yield "OK";
      }
      default -> throw new IllegalArgumentException("unknown request " + request[0]);
    };
  }
}
