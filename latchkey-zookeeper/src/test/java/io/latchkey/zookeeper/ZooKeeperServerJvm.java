package io.latchkey.zookeeper;

import io.latchkey.testkit.process.WorkerJvm;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One ZooKeeper server in a JVM of its own ({@link ForkedZooKeeperServer}), on a free port and a
 * data directory of its own: it can be killed with SIGKILL and started again on the same port and
 * data, as a crashed server restarts, and stopped with SIGSTOP for a while, as a stalled one.
 * Closing kills it and deletes its data.
 */
final class ZooKeeperServerJvm implements AutoCloseable {
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  private final Optional<Duration> ttlCheckInterval;
  private final Path dataDir;
  private final String connectString;
  private final int port;
  private WorkerJvm process;

  private ZooKeeperServerJvm(Optional<Duration> ttlCheckInterval) throws IOException {
    this.ttlCheckInterval = ttlCheckInterval;
    this.dataDir = Files.createTempDirectory("latchkey-zookeeper-");
    this.process = launch(List.of());
    this.connectString = serving(process);
    this.port = Integer.parseInt(connectString.substring(connectString.lastIndexOf(':') + 1));
  }

  /**
   * @return a running server that takes no TTL nodes, as servers run by default
   */
  static ZooKeeperServerJvm withoutTtlNodes() throws IOException {
    return new ZooKeeperServerJvm(Optional.empty());
  }

  /**
   * @param checkInterval how often the server's container manager deletes the TTL nodes whose time
   *     to live has passed
   * @return a running server that takes TTL nodes
   */
  static ZooKeeperServerJvm withTtlNodes(Duration checkInterval) throws IOException {
    return new ZooKeeperServerJvm(Optional.of(checkInterval));
  }

  private WorkerJvm launch(List<String> more) throws IOException {
    List<String> args = new ArrayList<>(more);
    args.add("dataDir=" + dataDir);
    ttlCheckInterval.ifPresent(interval -> args.add("ttlCheckMs=" + interval.toMillis()));
    return WorkerJvm.start(ForkedZooKeeperServer.class, args, line -> {});
  }

  private static String serving(WorkerJvm started) {
    try {
      return started.awaitLine("SERVING", START_TIMEOUT);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while the ZooKeeper server started", e);
    }
  }

  /**
   * @return {@code 127.0.0.1:port}
   */
  String connectString() {
    return connectString;
  }

  /**
   * @return the port, the same after a restart
   */
  int port() {
    return port;
  }

  /** Kills the server with SIGKILL: no clean shut-down; what it wrote to its data stays. */
  synchronized void kill() {
    process.close();
  }

  /** Starts a killed server again on its port and data directory and waits until it serves. */
  synchronized void restart() {
    process.close();
    try {
      process = launch(List.of("port=" + port));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    serving(process);
  }

  /**
   * Stops the server with SIGSTOP and resumes it with SIGCONT after {@code duration}, from another
   * thread; returns at once. Its clients' connections stay open and get no answer meanwhile.
   */
  synchronized void pause(Duration duration) {
    long pid = process.pid();
    signal("STOP", pid);
    CompletableFuture.delayedExecutor(duration.toMillis(), TimeUnit.MILLISECONDS)
        .execute(() -> signal("CONT", pid));
  }

  private static void signal(String signal, long pid) {
    try {
      WorkerJvm.signal(signal, pid);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while sending SIG" + signal, e);
    }
  }

  @Override
  public synchronized void close() throws IOException {
    process.close();
    try (Stream<Path> files = Files.walk(dataDir)) {
      files.sorted(Comparator.reverseOrder()).forEach(ZooKeeperServerJvm::delete);
    }
  }

  private static void delete(Path path) {
    try {
      Files.delete(path);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
