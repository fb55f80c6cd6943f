package io.latchkey.testkit.process;

import java.io.BufferedReader;
import java.io.File;
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
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LockWorker} in a JVM of its own: started with this JVM's {@code java} and class path,
 * read line by line from its standard output, and killed with SIGKILL when a test wants to crash it
 * or is done with it.
 *
 * <pre>{@code
 * try (WorkerJvm worker = WorkerJvm.start("uri=" + uri, "mode=hold", "lock=" + name)) {
 *   worker.awaitLine("READY", Duration.ofSeconds(60));
 *   String acquired = worker.awaitLine("ACQUIRED", Duration.ofSeconds(30));
 *   worker.kill();
 * }
 * }</pre>
 *
 * <p>Closing kills the worker if it is still alive; a JVM shutdown hook kills any worker that a
 * test left behind, and a worker exits by itself when this JVM (its standard input) goes away.
 */
public final class WorkerJvm implements AutoCloseable {
  private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(() -> LIVE.forEach(Process::destroyForcibly), "latchkey-worker-reaper"));
  }

  private final Process process;
  private final Path errorLog;
  private final Writer input;
  private final BlockingQueue<Line> lines = new LinkedBlockingQueue<>();
  private final List<String> transcript = new ArrayList<>();

  /** One line of the worker's output; a null text marks the end of its output. */
  private record Line(@Nullable String text) {}

  private WorkerJvm(Process process, Path errorLog) {
    this.process = process;
    this.errorLog = errorLog;
    this.input = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
  }

  /**
   * Starts a worker.
   *
   * @param args the {@link LockWorker} arguments, {@code key=value}
   * @return the running worker
   * @throws IOException if the JVM could not be started
   */
  public static WorkerJvm start(String... args) throws IOException {
    return start(List.of(args));
  }

  /**
   * Starts a worker.
   *
   * @param args the {@link LockWorker} arguments, {@code key=value}
   * @return the running worker
   * @throws IOException if the JVM could not be started
   */
  public static WorkerJvm start(List<String> args) throws IOException {
    return start(LockWorker.class, args, line -> {});
  }

  /**
   * Starts a JVM running another main class of this class path, such as the fault suite's worker,
   * and hands each line it prints to {@code onLine} as it arrives (on a reader thread, in order),
   * besides keeping it for {@link #awaitLine}.
   *
   * @param mainClass the class whose {@code main} the worker runs
   * @param args its arguments
   * @param onLine called with every line of its standard output; must not block for long
   * @return the running worker
   * @throws IOException if the JVM could not be started
   */
  public static WorkerJvm start(Class<?> mainClass, List<String> args, Consumer<String> onLine)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(javaExecutable().toString());
    command.add("-Xmx256m");
    command.add("-XX:+UseSerialGC");
    command.add("-XX:TieredStopAtLevel=1");
    command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
    command.add("-cp");
    command.add(classPath());
    command.add(mainClass.getName());
    command.addAll(args);
    Path errorLog = Files.createTempFile("latchkey-worker-", ".log");
    Process process =
        new ProcessBuilder(command)
            .redirectOutput(ProcessBuilder.Redirect.PIPE)
            .redirectInput(ProcessBuilder.Redirect.PIPE)
            .redirectError(errorLog.toFile())
            .start();
    LIVE.add(process);
    WorkerJvm worker = new WorkerJvm(process, errorLog);
    worker.startReading(onLine);
    return worker;
  }

  /**
   * This JVM's class path, and its module path when the tests run as modules (a backend module with
   * a module-info is then on it): the worker runs all of them on its class path.
   */
  private static String classPath() {
    String modulePath = System.getProperty("jdk.module.path", "");
    String classPath = System.getProperty("java.class.path", "");
    if (modulePath.isEmpty()) {
      return classPath;
    }
    return classPath.isEmpty() ? modulePath : modulePath + File.pathSeparator + classPath;
  }

  private static Path javaExecutable() {
    Path bin = Path.of(System.getProperty("java.home"), "bin");
    Path java = bin.resolve("java");
    return Files.isExecutable(java) ? java : bin.resolve("java.exe");
  }

  private void startReading(Consumer<String> onLine) {
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader out =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                  synchronized (transcript) {
                    transcript.add(line);
                  }
                  lines.add(new Line(line));
                  onLine.accept(line);
                }
              } catch (IOException e) {
                // The worker was killed: its output simply ends.
              }
              lines.add(new Line(null));
            },
            "latchkey-worker-" + process.pid());
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * @return the worker's process id
   */
  public long pid() {
    return process.pid();
  }

  /**
   * @return whether the worker is still running
   */
  public boolean isAlive() {
    return process.isAlive();
  }

  /**
   * Waits for the next line starting with {@code keyword}; lines with other keywords are skipped.
   *
   * @param keyword e.g. {@code READY}
   * @param timeout how long to wait
   * @return the rest of the line after the keyword, trimmed
   * @throws AssertionError if the worker reports an error, exits, or stays silent too long; the
   *     message holds its output and error log
   */
  public String awaitLine(String keyword, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      Line line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      if (line == null) {
        throw new AssertionError(
            "worker printed no " + keyword + " line within " + timeout + diagnostics());
      }
      String text = line.text();
      if (text == null) {
        lines.add(line);
        throw new AssertionError("worker ended before printing " + keyword + diagnostics());
      }
      if (text.startsWith("ERROR")) {
        throw new AssertionError("worker failed: " + text + diagnostics());
      }
      if (text.equals(keyword) || text.startsWith(keyword + " ")) {
        return text.substring(keyword.length()).trim();
      }
    }
  }

  /**
   * Sends one line to the worker's standard input.
   *
   * @param line e.g. {@code GO}
   */
  public void send(String line) {
    try {
      input.write(line + "\n");
      input.flush();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot talk to worker " + pid() + diagnostics(), e);
    }
  }

  /**
   * Waits for the worker to exit by itself.
   *
   * @param timeout how long to wait
   * @return its exit code
   * @throws AssertionError if it is still running after the timeout
   */
  public int awaitExit(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
      throw new AssertionError("worker did not exit within " + timeout + diagnostics());
    }
    LIVE.remove(process);
    return process.exitValue();
  }

  /**
   * Whether the worker has printed a line starting with {@code keyword} so far; unlike {@link
   * #awaitLine} this consumes nothing.
   *
   * @param keyword e.g. {@code ACQUIRED}
   * @return whether such a line was printed
   */
  public boolean printed(String keyword) {
    synchronized (transcript) {
      return transcript.stream()
          .anyMatch(text -> text.equals(keyword) || text.startsWith(keyword + " "));
    }
  }

  /**
   * Stops the worker with SIGSTOP, as a long pause would: it runs nothing until {@link #resume}.
   */
  public void pause() throws InterruptedException {
    signal("STOP", pid());
  }

  /** Lets a {@linkplain #pause paused} worker go on with SIGCONT. */
  public void resume() throws InterruptedException {
    signal("CONT", pid());
  }

  /**
   * Sends a signal to a process with {@code kill}, and waits until {@code kill} is done.
   *
   * @param signal the signal's name without {@code SIG}, e.g. {@code STOP}
   * @param pid the process
   */
  public static void signal(String signal, long pid) throws InterruptedException {
    try {
      Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
      kill.waitFor();
    } catch (IOException e) {
      throw new IllegalStateException("cannot send SIG" + signal + " to " + pid, e);
    }
  }

  /**
   * Kills the worker with SIGKILL, as a crash would, and waits until it is gone: no shutdown hook
   * runs, nothing is released.
   */
  public void kill() throws InterruptedException {
    process.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new AssertionError("worker " + pid() + " survived SIGKILL for 30 s");
    }
    LIVE.remove(process);
  }

  /**
   * @return the exit status, what the worker printed and the end of its error log, for failure
   *     messages
   */
  public String diagnostics() {
    StringBuilder text = new StringBuilder();
    text.append("\n--- worker ").append(process.pid());
    text.append(process.isAlive() ? " (running)" : " (exit " + process.exitValue() + ")");
    text.append(" printed:\n");
    synchronized (transcript) {
      transcript.forEach(line -> text.append(line).append('\n'));
    }
    text.append("--- error log (end):\n").append(errorLogTail());
    return text.toString();
  }

  private String errorLogTail() {
    try {
      String log = Files.readString(errorLog, StandardCharsets.UTF_8);
      return log.length() <= 4000 ? log : "…" + log.substring(log.length() - 4000);
    } catch (IOException e) {
      return "(unreadable: " + e + ")";
    }
  }

  /**
   * Kills the worker if it is still running and deletes its error log. An interrupt while waiting
   * for the worker to die is kept for the caller.
   */
  @Override
  public void close() {
    try {
      if (process.isAlive()) {
        kill();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      LIVE.remove(process);
      try {
        Files.deleteIfExists(errorLog);
      } catch (IOException e) {
        // A temp file left behind is harmless.
      }
    }
  }
}
