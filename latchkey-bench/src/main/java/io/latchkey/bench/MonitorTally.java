package io.latchkey.bench;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts commands by Redis's {@code MONITOR} feed, which tells a command a client sent ({@code [0
 * 127.0.0.1:PORT] "evalsha" ...}) from one a script ran ({@code [0 lua] "hgetall" ...}), something
 * {@code INFO commandstats} cannot do (a DEL, a PUBLISH may be either). It counts between two
 * marks, {@code ECHO} commands that the harness sends ({@link #START_MARK}, {@link #END_MARK}), so
 * that its window matches the one of {@code CONFIG RESETSTAT} and {@code INFO commandstats}.
 * MONITOR leaves out administrative commands ({@code CONFIG}, {@code CLIENT ...}), which the
 * libraries do not send while locking, and costs Redis some time per command.
 */
final class MonitorTally implements AutoCloseable {
  private final Socket socket;
  private final BufferedReader in;
  private final Thread reader;
  private final Map<String, LongAdder> fromClients = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> fromScripts = new ConcurrentHashMap<>();
  private final CountDownLatch ended = new CountDownLatch(1);
  private volatile boolean closing;
  // Only the reader thread touches it.
  private boolean counting;

  /** The argument of the {@code ECHO} after which commands count. */
  static final String START_MARK = "latchkey-bench-monitor-start";

  /** The argument of the {@code ECHO} after which commands no longer count. */
  static final String END_MARK = "latchkey-bench-monitor-end";

  private MonitorTally(Socket socket, BufferedReader in) {
    this.socket = socket;
    this.in = in;
    this.reader = new Thread(this::read, "monitor-tally");
    reader.setDaemon(true);
  }

  /**
   * Starts counting; returns once the server has confirmed {@code MONITOR}.
   *
   * @param host the server's address
   * @param port the server's port (no password)
   */
  static MonitorTally start(String host, int port) {
    try {
      Socket socket = new Socket();
      socket.connect(new InetSocketAddress(host, port), 1_000);
      OutputStream out = socket.getOutputStream();
      out.write("MONITOR\r\n".getBytes(UTF_8));
      out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), UTF_8));
      String first = in.readLine();
      if (!"+OK".equals(first)) {
        socket.close();
        throw new IllegalStateException("MONITOR answered " + first);
      }
      MonitorTally tally = new MonitorTally(socket, in);
      tally.reader.start();
      return tally;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start MONITOR on " + host + ":" + port, e);
    }
  }

  private void read() {
    try {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        count(line);
      }
    } catch (IOException e) {
      if (!closing) {
        throw new UncheckedIOException("MONITOR feed broke", e);
      }
    }
  }

  /** Counts one line: {@code +<time> [<db> <source>] "<command>" ...}. */
  private void count(String line) {
    int open = line.indexOf('[');
    int close = line.indexOf(']', open);
    int quote = line.indexOf('"', close);
    int endQuote = line.indexOf('"', quote + 1);
    if (open < 0 || close < 0 || quote < 0 || endQuote < 0) {
      return;
    }
    String source = line.substring(line.indexOf(' ', open) + 1, close);
    String command = line.substring(quote + 1, endQuote).toLowerCase(Locale.ROOT);
    if (command.equals("echo")) {
      if (line.contains(START_MARK)) {
        counting = true;
      } else if (line.contains(END_MARK)) {
        counting = false;
        ended.countDown();
      }
      return;
    }
    if (!counting) {
      return;
    }
    (source.equals("lua") ? fromScripts : fromClients)
        .computeIfAbsent(command, key -> new LongAdder())
        .increment();
  }

  /**
   * Waits until the feed has reached the end mark.
   *
   * @throws IllegalStateException if it does not within 10 s
   */
  void awaitEnd() throws InterruptedException {
    if (!ended.await(10, TimeUnit.SECONDS)) {
      throw new IllegalStateException("the MONITOR feed did not reach the end mark in 10 s");
    }
  }

  /** The commands clients sent between the marks, by name. */
  Map<String, Long> fromClients() {
    return snapshot(fromClients);
  }

  /** The commands scripts ran between the marks, by name. */
  Map<String, Long> fromScripts() {
    return snapshot(fromScripts);
  }

  private static Map<String, Long> snapshot(Map<String, LongAdder> counts) {
    Map<String, Long> copy = new TreeMap<>();
    counts.forEach((command, count) -> copy.put(command, count.sum()));
    return copy;
  }

  @Override
  public void close() {
    closing = true;
    try {
      socket.close();
      reader.join(5_000);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
