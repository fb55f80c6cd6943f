package io.latchkey.servers;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * A database server process for tests (PostgreSQL, MariaDB), on a free port of {@code 127.0.0.1},
 * with a throwaway data directory that {@link #close()} deletes. The machine's own database
 * servers, on their standard ports, are never touched: each instance runs its own binaries on its
 * own port and directory.
 *
 * <p>{@link #stop()} shuts the server down cleanly, {@link #kill()} with SIGKILL; {@link
 * #restart()} starts it again on the same port and data, so committed rows survive; {@link
 * #restartEmpty()} starts it again on the same port with a new, empty data directory. Run as root,
 * the server runs as the database's system user instead ({@code postgres}, {@code mysql}) where it
 * refuses root, through {@code setpriv}.
 */
public abstract class SqlTestServer implements AutoCloseable {
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(20);
  private static final int LOG_TAIL_LINES = 30;

  private final int port;
  private final Path directory;
  private volatile @Nullable Process process;
  private boolean closed;

  /**
   * @param kind a short name for the directory
   * @throws UncheckedIOException if the directory cannot be made
   */
  protected SqlTestServer(String kind) {
    this.port = RedisTestServer.pickFreePort(false);
    try {
      this.directory =
          Files.createTempDirectory("latchkey-" + kind + "-" + port + "-").toAbsolutePath();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ServerReaper.trackDirectory(directory);
  }

  /**
   * @return the port the server listens on, the same across restarts
   */
  public int port() {
    return port;
  }

  /**
   * @return the server's own directory (data, socket, log)
   */
  public Path directory() {
    return directory;
  }

  /**
   * @return the JDBC URL of the test database, with the user but no password (none is needed)
   */
  public abstract String jdbcUrl();

  /** The command that runs the server in the foreground. */
  protected abstract List<String> serverCommand();

  /** The line of the log that says the server accepts connections. */
  protected abstract String readyLine();

  /** The signal for a clean and fast shutdown. */
  protected abstract String stopSignal();

  /**
   * Prepares a new {@link #dataDirectory()}: before the first start, and by {@link
   * #restartEmpty()}.
   */
  protected abstract void initialise() throws IOException;

  /**
   * @return the directory of the server's databases, inside {@link #directory()}
   */
  protected final Path dataDirectory() {
    return directory.resolve("data");
  }

  /**
   * @return the log file
   */
  public Path logFile() {
    return directory.resolve("server.log");
  }

  /**
   * Prepares and starts a new server, or closes it (its directory deleted) if either step fails.
   *
   * @param server a server made but not started
   * @param database the database's name, for the failure's message
   * @return {@code server}, accepting connections
   * @throws IllegalStateException if it did not start
   */
  protected static <S extends SqlTestServer> S initialiseAndLaunch(S server, String database) {
    try {
      server.initialise();
      server.launch();
      return server;
    } catch (IOException | RuntimeException e) {
      server.close();
      throw new IllegalStateException(database + " did not start: " + e.getMessage(), e);
    }
  }

  /** Starts the server; returns once it accepts connections. */
  protected final void launch() {
    Process started;
    try {
      Files.deleteIfExists(logFile());
      started =
          new ProcessBuilder(serverCommand())
              .redirectErrorStream(true)
              .redirectOutput(logFile().toFile())
              .start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start " + serverCommand().get(0), e);
    }
    ServerReaper.track(started);
    process = started;
    try {
      Polling.await(
          START_TIMEOUT,
          getClass().getSimpleName() + " on port " + port,
          () -> {
            if (!started.isAlive()) {
              throw new IllegalStateException(
                  "the server exited with " + started.exitValue() + ":\n" + logTail());
            }
            return logTail().contains(readyLine()) && accepts();
          });
    } catch (RuntimeException e) {
      ServerReaper.killTree(started);
      throw new IllegalStateException(e.getMessage() + "\nlog:\n" + logTail(), e);
    }
  }

  private boolean accepts() {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
      return true;
    } catch (IOException notYet) {
      return false;
    }
  }

  /**
   * @return the last lines of the log
   */
  public String logTail() {
    try {
      if (!Files.exists(logFile())) {
        return "";
      }
      List<String> lines = Files.readAllLines(logFile(), UTF_8);
      return String.join(
          "\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
    } catch (IOException | UncheckedIOException e) {
      return "(log unreadable: " + e + ")";
    }
  }

  /** Shuts the server down cleanly (waits for it to end). Idempotent. */
  public synchronized void stop() {
    Process running = process;
    if (running == null || !running.isAlive()) {
      return;
    }
    run(List.of("kill", "-" + stopSignal(), String.valueOf(running.pid())));
    try {
      if (!running.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        ServerReaper.killTree(running);
        running.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while stopping the server", e);
    }
    ServerReaper.untrack(running);
  }

  /** Kills the server with SIGKILL, as a crash would. */
  public synchronized void kill() {
    Process running = process;
    if (running == null) {
      return;
    }
    ServerReaper.killTree(running);
    try {
      running.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    ServerReaper.untrack(running);
  }

  /**
   * Stops every process of the server (SIGSTOP) and resumes them (SIGCONT) after {@code duration},
   * from a thread of its own; returns at once. Clients' connections stay open and get no answer
   * meanwhile, as from a server stalled by a virtual machine's pause or by swapping.
   *
   * @throws IllegalStateException if the server is not running
   */
  public void pause(Duration duration) {
    Process running = process;
    if (running == null || !running.isAlive()) {
      throw new IllegalStateException("the server is not running");
    }
    // The parent first, so that it starts no new process while its children are being stopped.
    signal("STOP", Stream.of(running.toHandle()));
    signal("STOP", running.descendants());
    Thread resume =
        new Thread(
            () -> {
              try {
                Thread.sleep(duration.toMillis());
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              signal("CONT", Stream.concat(running.descendants(), Stream.of(running.toHandle())));
            },
            "latchkey-sql-server-resume-" + port);
    resume.setDaemon(true);
    resume.start();
  }

  /** Sends a signal to processes, ignoring those that ended meanwhile. */
  private static void signal(String name, Stream<ProcessHandle> processes) {
    List<String> command = new ArrayList<>(List.of("kill", "-" + name));
    processes.forEach(handle -> command.add(String.valueOf(handle.pid())));
    if (command.size() == 2) {
      return;
    }
    try {
      Process kill = new ProcessBuilder(command).redirectErrorStream(true).start();
      kill.getInputStream().readAllBytes();
      kill.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Starts the server again on the same port and data directory, after a stop or a kill. */
  public synchronized void restart() {
    requireOpen();
    stop();
    launch();
  }

  /**
   * Stops the server (cleanly), deletes its data directory, prepares a new one as at the first
   * start, and starts the server again on the same port: the server comes back having lost
   * everything made since it started (databases, tables, rows), as a wiped container or a replica
   * promoted without them would. Clients find it at the same address.
   *
   * @throws IllegalStateException if the server is closed or does not start again
   */
  public synchronized void restartEmpty() {
    requireOpen();
    stop();
    ServerReaper.deleteRecursively(dataDirectory());
    try {
      initialise();
    } catch (IOException e) {
      throw new IllegalStateException("cannot prepare a new data directory: " + e.getMessage(), e);
    }
    launch();
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException("the server is closed");
    }
  }

  /**
   * @return true while the server process runs
   */
  public boolean isRunning() {
    Process running = process;
    return running != null && running.isAlive();
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    stop();
    ServerReaper.deleteDirectory(directory);
  }

  /**
   * Runs a helper command to its end.
   *
   * @throws IllegalStateException if it fails, with its output
   */
  protected final void run(List<String> command) {
    try {
      Process helper = new ProcessBuilder(command).redirectErrorStream(true).start();
      String output = new String(helper.getInputStream().readAllBytes(), UTF_8);
      if (!helper.waitFor(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        helper.destroyForcibly();
        throw new IllegalStateException(command + " did not finish");
      }
      if (helper.exitValue() != 0) {
        throw new IllegalStateException(
            command + " failed (" + helper.exitValue() + "):\n" + output);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + command, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted running " + command, e);
    }
  }

  /**
   * @return true if this JVM runs as root
   */
  protected static boolean runsAsRoot() {
    return "root".equals(System.getProperty("user.name"));
  }

  /**
   * @param user a system user
   * @param command a command
   * @return the command run as that user (through setpriv) if this JVM is root, else as is
   */
  protected static List<String> asUser(String user, List<String> command) {
    if (!runsAsRoot()) {
      return command;
    }
    List<String> wrapped =
        new ArrayList<>(
            List.of("setpriv", "--reuid=" + user, "--regid=" + user, "--init-groups", "--"));
    wrapped.addAll(command);
    return wrapped;
  }

  /** Gives a directory tree to a system user, when run as root. */
  protected static void chown(Path root, String user) throws IOException {
    if (!runsAsRoot()) {
      return;
    }
    UserPrincipal owner =
        root.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(user);
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path path : paths.toList()) {
        Files.setOwner(path, owner);
      }
    }
  }

  /**
   * @param names executables to look for
   * @param directories where to look first, before PATH
   * @return the first found, or null
   */
  protected static @Nullable Path locate(List<String> names, List<Path> directories) {
    List<Path> candidates = new ArrayList<>(directories);
    String path = System.getenv("PATH");
    if (path != null) {
      for (String entry : path.split(java.io.File.pathSeparator, -1)) {
        if (!entry.isEmpty()) {
          candidates.add(Path.of(entry));
        }
      }
    }
    for (Path directory : candidates) {
      for (String name : names) {
        Path binary = directory.resolve(name);
        if (Files.isExecutable(binary)) {
          return binary;
        }
      }
    }
    return null;
  }
}
