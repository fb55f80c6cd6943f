package io.latchkey.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The demo's buyers as worker JVMs ({@link DemoWorkerCommand}), started with this JVM's class path,
 * each with its own latchkey client and buyer threads. They share the stock through a memory-mapped
 * file in a temporary directory, which also holds their logs.
 *
 * <p>Workers are started once and serve every run. {@link #close()} ends them: their standard input
 * closes, which a worker takes as the order to exit (so workers also exit if this JVM dies), and
 * any that have not exited within 5 s are killed.
 */
final class WorkerProcesses implements FlashSale.Buyers, AutoCloseable {
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(5);
  private static final int LOG_TAIL_LINES = 5;

  /** A line from a worker; a null line is the end of its output. */
  private record Event(int worker, @Nullable String line) {}

  private final Path directory;
  private final List<Process> processes = new ArrayList<>();
  private final List<Writer> orders = new ArrayList<>();
  private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();

  private WorkerProcesses(Path directory) {
    this.directory = directory;
  }

  /**
   * Starts the workers and waits until each has connected.
   *
   * @param uri the backend every worker connects to
   * @param count how many worker processes
   * @param threads buyer threads per worker
   * @param progress told how many workers are ready
   */
  static WorkerProcesses start(String uri, int count, int threads, LongConsumer progress)
      throws InterruptedException {
    Path directory;
    try {
      directory = Files.createTempDirectory("latchkey-demo-");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a directory for the demo's workers", e);
    }
    WorkerProcesses workers = new WorkerProcesses(directory);
    try {
      for (int i = 0; i < count; i++) {
        workers.launch(i, uri, threads);
      }
      workers.await("READY", START_TIMEOUT, wait -> {}, progress);
      return workers;
    } catch (RuntimeException | InterruptedException e) {
      workers.close();
      throw e;
    }
  }

  private void launch(int index, String uri, int threads) {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classPath = Path.of(System.getProperty("java.class.path")).toAbsolutePath().toString();
    List<String> command =
        List.of(
            java,
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            classPath,
            LatchkeyCommand.class.getName(),
            "demo-worker",
            "--backend",
            uri,
            "--threads",
            Integer.toString(threads));
    try {
      Process process = new ProcessBuilder(command).redirectError(log(index).toFile()).start();
      processes.add(process);
      orders.add(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8));
      Thread reader = new Thread(() -> relay(index, process), "demo-worker-" + index + "-output");
      reader.setDaemon(true);
      reader.start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start demo worker " + index + ": " + command, e);
    }
  }

  private void relay(int index, Process process) {
    try (BufferedReader lines =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        events.add(new Event(index, line));
      }
    } catch (IOException e) {
      // The worker is gone; the end of output below says so.
    }
    events.add(new Event(index, null));
  }

  @Override
  public void buy(SaleGuard guard, int stock, LongConsumer onSale) throws InterruptedException {
    Path file = directory.resolve("stock-" + guard.name().toLowerCase(Locale.ROOT));
    Stock.create(file, stock);
    for (int i = 0; i < orders.size(); i++) {
      send(i, "RUN " + guard.name() + " " + file);
    }
    await("DONE", FlashSale.RUN_TIMEOUT, onSale, done -> {});
  }

  /**
   * Reads the workers' lines until each has said {@code expected}, passing on their sales and how
   * many have said it.
   */
  private void await(String expected, Duration timeout, LongConsumer onSale, LongConsumer said)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    int saidIt = 0;
    while (saidIt < processes.size()) {
      Event event = events.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      if (event == null) {
        throw new IllegalStateException(
            "the demo's workers did not say " + expected + " within " + Durations.format(timeout));
      }
      String line = event.line();
      if (line == null || line.startsWith("ERROR ")) {
        throw new IllegalStateException(
            "demo worker "
                + event.worker()
                + (line == null ? " exited" : " failed: " + line.substring(6))
                + logTail(event.worker()));
      }
      if (line.startsWith("SALE ")) {
        onSale.accept(Long.parseLong(line.substring(5)));
      } else if (line.equals(expected)) {
        said.accept(++saidIt);
      }
    }
  }

  private void send(int worker, String order) {
    try {
      Writer writer = orders.get(worker);
      writer.write(order + "\n");
      writer.flush();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot reach demo worker " + worker, e);
    }
  }

  private Path log(int worker) {
    return directory.resolve("worker-" + worker + ".log");
  }

  private String logTail(int worker) {
    try {
      List<String> lines = Files.readAllLines(log(worker), StandardCharsets.UTF_8);
      List<String> tail = lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size());
      return tail.isEmpty() ? "" : " (its log ends: " + String.join(" | ", tail).strip() + ")";
    } catch (IOException e) {
      return "";
    }
  }

  /** Ends every worker (bounded) and deletes the directory. */
  @Override
  public void close() {
    for (Writer writer : orders) {
      try {
        writer.close();
      } catch (IOException e) {
        // The worker is gone already.
      }
    }
    long deadline = System.nanoTime() + EXIT_TIMEOUT.toNanos();
    for (Process process : processes) {
      try {
        if (!process.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
          process.descendants().forEach(ProcessHandle::destroyForcibly);
          process.destroyForcibly();
          process.waitFor(EXIT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
    try (Stream<Path> files = Files.walk(directory)) {
      files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException e) {
      // A leftover temporary directory is harmless.
    }
  }
}
