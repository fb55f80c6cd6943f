package io.latchkey.servers;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocketFactory;
import org.jspecify.annotations.Nullable;

/**
 * A real {@code redis-server} process for tests, listening on a free port of {@code 127.0.0.1}.
 *
 * <p>Each server has its own temporary directory (configuration, log file), no persistence ({@code
 * save ""}, {@code appendonly no}) and is bound to the loopback interface only. {@link #start()}
 * returns once the server answers {@code PING} and has proved, through the {@code process_id} in
 * {@code INFO server}, that it is the process this class launched; no other command is sent before
 * that, so a server this class did not start, such as a Redis already on 6379, is left alone.
 *
 * <pre>{@code
 * try (RedisTestServer redis = RedisTestServer.start()) {
 *   connect(redis.uri());                        // redis://127.0.0.1:PORT
 *   redis.kill();                                // crash: SIGKILL
 *   redis.restart();                             // same port, empty data
 *   Object hits = redis.info("commandstats");
 * }
 * }</pre>
 *
 * <p>The process is stopped by {@link #close()} and, should a test forget, by a JVM shutdown hook.
 * Instances are thread-safe: lifecycle methods are serialised, and {@link #command(String...)}
 * opens its own connection per call.
 */
public final class RedisTestServer implements AutoCloseable {
  static final String HOST = "127.0.0.1";

  /** Redis Cluster listens for its bus on the data port plus this offset. */
  static final int CLUSTER_BUS_PORT_OFFSET = 10_000;

  // Ports come from below the usual Linux ephemeral range (32768-60999), so that outgoing
  // connections do not take a port between a kill() and the restart() on the same port.
  private static final int FIRST_PORT = 20_000;
  private static final int PORT_RANGE = 10_000;
  private static final int MAX_FREE_PORT_PROBES = 200;
  private static final int MAX_LAUNCH_ATTEMPTS = 10;
  private static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration KILL_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration PORT_RELEASE_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);
  private static final int LOG_TAIL_LINES = 30;
  private static final int LOG_TAIL_BYTES = 16 * 1024;
  private static final Set<String> MANAGED_DIRECTIVES =
      Set.of("port", "bind", "dir", "logfile", "daemonize", "pidfile", "include");

  private final RedisBinary binary;
  private final int port;
  private final @Nullable String password;
  private final boolean sentinel;
  private final boolean clusterBus;
  private final Duration startTimeout;
  private final List<List<String>> startCommands;
  private final Path directory;
  private final Path configFile;
  private final Path logFile;
  private final Path outputFile;
  private final @Nullable TestCertificates certificates;

  private volatile @Nullable Process process;
  private boolean closed;

  private RedisTestServer(Builder builder, RedisBinary binary, int port) throws IOException {
    this.binary = binary;
    this.port = port;
    this.password = builder.password;
    this.sentinel = builder.sentinel;
    this.clusterBus = builder.clusterBus;
    this.startTimeout = builder.startTimeout;
    this.startCommands = List.copyOf(builder.startCommands);
    this.directory =
        Files.createTempDirectory("latchkey-redis-" + port + "-").toAbsolutePath().toRealPath();
    ServerReaper.trackDirectory(directory);
    this.configFile = directory.resolve(sentinel ? "sentinel.conf" : "redis.conf");
    this.logFile = directory.resolve("redis.log");
    this.outputFile = directory.resolve("stdout.log");
    try {
      this.certificates = builder.tls ? TestCertificates.generate(directory) : null;
    } catch (RuntimeException e) {
      ServerReaper.deleteDirectory(directory);
      throw e;
    }
    // Written once: a sentinel rewrites its own file with what it learned, which a restart keeps.
    Files.write(configFile, configuration(builder).getBytes(UTF_8));
  }

  /**
   * Starts a standalone server with default settings, using {@link RedisBinary#locate()}.
   *
   * @return the running server
   * @throws IllegalStateException if no binary is found or the server does not become ready within
   *     10 s; the message includes the tail of the server's log
   */
  public static RedisTestServer start() {
    return builder().start();
  }

  /**
   * Returns a builder for a server with options.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Returns the loopback address the server listens on.
   *
   * @return {@code 127.0.0.1}
   */
  public String host() {
    return HOST;
  }

  /**
   * Returns the port the server listens on; it stays the same across {@link #restart()}.
   *
   * @return the TCP port
   */
  public int port() {
    return port;
  }

  /**
   * Returns {@code host:port}.
   *
   * @return for example {@code 127.0.0.1:21234}
   */
  public String hostAndPort() {
    return HOST + ":" + port;
  }

  /**
   * Returns the server's URI, without credentials.
   *
   * @return {@code redis://127.0.0.1:PORT}, or {@code rediss://127.0.0.1:PORT} for a server started
   *     with {@link Builder#tls()}
   */
  public String uri() {
    return (certificates != null ? "rediss://" : "redis://") + hostAndPort();
  }

  /**
   * Tells whether the server speaks TLS only, as started with {@link Builder#tls()}.
   *
   * @return {@code true} for a TLS server
   */
  public boolean isTls() {
    return certificates != null;
  }

  /**
   * Returns the TLS URI of a server started with {@link Builder#tls()}, without credentials. Its
   * certificate is for {@code 127.0.0.1} and {@code localhost} and is signed by {@link
   * #caCertificate()}, which a client must trust to verify it.
   *
   * @return {@code rediss://127.0.0.1:PORT}
   * @throws IllegalStateException if the server does not speak TLS
   */
  public String tlsUri() {
    requireTls();
    return "rediss://" + hostAndPort();
  }

  /**
   * Returns the certificate (PEM) of the throwaway CA that signed a TLS server's certificate. It
   * lives in the server's temporary directory and is deleted by {@link #close()}.
   *
   * @return the path of {@code ca.crt}
   * @throws IllegalStateException if the server does not speak TLS
   */
  public Path caCertificate() {
    return requireTls().caCertificate();
  }

  /**
   * Returns the password of the default user, if one was set with {@link Builder#password}.
   *
   * @return the password, or empty if the default user needs none
   */
  public Optional<String> password() {
    return Optional.ofNullable(password);
  }

  /**
   * Returns the executable this server runs.
   *
   * @return the binary
   */
  public RedisBinary binary() {
    return binary;
  }

  /**
   * Returns the server's log file, useful when a test fails.
   *
   * @return the path of the log file in the server's temporary directory
   */
  public Path logFile() {
    return logFile;
  }

  /**
   * Tells whether the server process is alive.
   *
   * @return {@code true} between a successful start and {@link #stop()}, {@link #kill()} or the
   *     process dying on its own
   */
  public boolean isRunning() {
    Process current = process;
    return current != null && current.isAlive();
  }

  /**
   * Returns the operating-system process id of the running server.
   *
   * @return the pid, or empty if the server is not running
   */
  public OptionalLong pid() {
    Process current = process;
    return current != null && current.isAlive()
        ? OptionalLong.of(current.pid())
        : OptionalLong.empty();
  }

  /**
   * Sends one command on a new connection (authenticated as the default user when a password is
   * set) and returns the reply.
   *
   * <p>Replies map to Java as: simple and bulk strings to {@link String} (UTF-8), integers to
   * {@link Long}, arrays to an unmodifiable {@link List}, null replies to {@code null}. Errors
   * nested in an array (as from {@code EXEC}) are {@link RedisErrorReplyException} elements. Only
   * RESP2 is understood; do not send {@code HELLO 3}. Because every call opens a connection, {@code
   * INFO commandstats} counts the {@code AUTH} of password-protected servers too.
   *
   * @param args the command name and its arguments, such as {@code "GET", "key"}
   * @return the parsed reply
   * @throws RedisErrorReplyException if the server replies with an error
   * @throws UncheckedIOException if the connection fails or the reply cannot be read within 30 s
   * @throws IllegalStateException if the server is not running (it may have been stopped and its
   *     port taken by another process)
   */
  public @Nullable Object command(String... args) {
    requireRunning();
    try (RespConnection connection =
        RespConnection.open(port, password, COMMAND_TIMEOUT, tlsSocketFactory())) {
      return connection.call(Arrays.asList(args));
    } catch (IOException e) {
      throw new UncheckedIOException(
          "command " + (args.length == 0 ? "" : args[0]) + " to " + hostAndPort() + " failed", e);
    }
  }

  /**
   * Runs {@code INFO section} and returns its {@code field:value} lines as a map.
   *
   * @param section an INFO section, such as {@code server}, {@code replication} or {@code
   *     commandstats}
   * @return the fields in server order, unmodifiable
   * @throws RedisErrorReplyException if the server replies with an error
   * @throws UncheckedIOException if the connection fails
   * @throws IllegalStateException if the server is not running
   */
  public Map<String, String> info(String section) {
    return parseInfo(String.valueOf(command("INFO", section)));
  }

  /**
   * Stops the server gracefully: SIGTERM, then SIGKILL if it has not exited within 5 s. Data is
   * lost, as nothing is persisted. Does nothing if the server is not running.
   *
   * @throws IllegalStateException if the process survives SIGKILL for 5 s
   */
  public synchronized void stop() {
    Process current = process;
    if (current == null) {
      return;
    }
    process = null;
    current.destroy();
    if (!awaitExit(current, STOP_TIMEOUT)) {
      ServerReaper.killTree(current);
      if (!awaitExit(current, KILL_TIMEOUT)) {
        throw new IllegalStateException(
            "redis-server pid " + current.pid() + " on " + hostAndPort() + " did not exit");
      }
    }
    ServerReaper.untrack(current);
  }

  /**
   * Kills the server with SIGKILL, as a crash would; clients see their connections reset. Does
   * nothing if the server is not running.
   *
   * @throws IllegalStateException if the process survives SIGKILL for 5 s
   */
  public synchronized void kill() {
    Process current = process;
    if (current == null) {
      return;
    }
    process = null;
    ServerReaper.killTree(current);
    if (!awaitExit(current, KILL_TIMEOUT)) {
      throw new IllegalStateException(
          "redis-server pid " + current.pid() + " on " + hostAndPort() + " did not exit");
    }
    ServerReaper.untrack(current);
  }

  /**
   * Stops the server if it runs (gracefully, as {@link #stop()}) and starts it again on the same
   * port with the same configuration. A master comes back empty, as nothing is persisted; a replica
   * resynchronises from its master; a cluster node keeps its identity ({@code nodes.conf}); a
   * sentinel keeps what it had written to its configuration file.
   *
   * @throws IllegalStateException if the server was closed, the port is taken by another process,
   *     or the server does not become ready in time
   */
  public synchronized void restart() {
    requireOpen();
    stop();
    Polling.await(
        PORT_RELEASE_TIMEOUT,
        "port " + port + " to be free for a restart",
        () -> portsFree(port, clusterBus));
    try {
      launch();
    } catch (PortTakenException e) {
      throw new IllegalStateException(
          "cannot restart on " + hostAndPort() + ": " + e.getMessage(), e);
    }
  }

  /**
   * Stops the server (as {@link #stop()}) and deletes its temporary directory. Idempotent.
   *
   * @throws IllegalStateException if the process survives SIGKILL for 5 s
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      stop();
    } finally {
      ServerReaper.deleteDirectory(directory);
    }
  }

  /**
   * Describes the server for messages.
   *
   * @return kind, address and state
   */
  @Override
  public String toString() {
    return (sentinel ? "redis-sentinel " : "redis-server ")
        + hostAndPort()
        + (isRunning() ? " (running)" : " (not running)");
  }

  /** Returns the last lines of the server's output and log, for failure messages. */
  String logTail() {
    return "--- stdout/stderr of "
        + hostAndPort()
        + " ---\n"
        + tail(outputFile)
        + "--- "
        + logFile
        + " ---\n"
        + tail(logFile);
  }

  static Map<String, String> parseInfo(String info) {
    Map<String, String> fields = new LinkedHashMap<>();
    for (String line : info.split("\r?\n", -1)) {
      int colon = line.indexOf(':');
      if (line.isEmpty() || line.startsWith("#") || colon < 0) {
        continue;
      }
      fields.put(line.substring(0, colon), line.substring(colon + 1));
    }
    return Collections.unmodifiableMap(fields);
  }

  private void launch() {
    List<String> commandLine = new ArrayList<>();
    commandLine.add(binary.path().toString());
    commandLine.add(configFile.toString());
    if (sentinel) {
      commandLine.add("--sentinel");
    }
    Process started;
    try {
      started =
          new ProcessBuilder(commandLine)
              .directory(directory.toFile())
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(outputFile.toFile()))
              .start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot launch " + commandLine, e);
    }
    ServerReaper.track(started);
    try {
      closeStandardInput(started);
      awaitReady(started);
      runStartCommands();
    } catch (RuntimeException e) {
      ServerReaper.killTree(started);
      awaitExit(started, KILL_TIMEOUT);
      ServerReaper.untrack(started);
      throw e;
    }
    process = started;
  }

  private void awaitReady(Process started) {
    try {
      Polling.await(
          startTimeout,
          "redis-server on " + hostAndPort() + " to answer PING",
          () -> {
            if (!started.isAlive()) {
              String tail = logTail();
              if (tail.contains("Address already in use")) {
                throw new PortTakenException("port " + port + " was taken before Redis bound it");
              }
              throw new IllegalStateException(
                  "redis-server on "
                      + hostAndPort()
                      + " exited with code "
                      + started.exitValue()
                      + " during start-up\n"
                      + tail);
            }
            return answersAsOurProcess(started);
          });
    } catch (Polling.TimeoutException e) {
      throw new IllegalStateException(e.getMessage() + "\n" + logTail(), e);
    }
  }

  private void runStartCommands() {
    for (List<String> command : startCommands) {
      try (RespConnection connection =
          RespConnection.open(port, password, COMMAND_TIMEOUT, tlsSocketFactory())) {
        connection.call(command);
      } catch (IOException e) {
        throw new UncheckedIOException(
            "start-up command " + command.get(0) + " to " + hostAndPort() + " failed", e);
      }
    }
  }

  /** PINGs the port and checks, through INFO, that the answer comes from our own process. */
  private boolean answersAsOurProcess(Process started) throws IOException {
    try (RespConnection connection =
        RespConnection.open(port, password, PROBE_TIMEOUT, tlsSocketFactory())) {
      if (!"PONG".equals(connection.call(List.of("PING")))) {
        return false;
      }
      Map<String, String> server =
          parseInfo(String.valueOf(connection.call(List.of("INFO", "server"))));
      String pid = server.get("process_id");
      if (pid == null || Long.parseLong(pid.trim()) != started.pid()) {
        throw new PortTakenException(
            "port " + port + " is answered by another process (pid " + pid + ")");
      }
      return true;
    }
  }

  private String configuration(Builder builder) {
    StringBuilder config = new StringBuilder();
    config.append("# Generated by latchkey-testkit for a test; deleted when the test ends.\n");
    if (certificates != null) {
      // TLS only: no plain-text port, so a client that forgets TLS cannot get in.
      appendLine(config, List.of("port", "0"));
      appendLine(config, List.of("tls-port", Integer.toString(port)));
      appendLine(config, List.of("tls-cert-file", certificates.serverCertificate().toString()));
      appendLine(config, List.of("tls-key-file", certificates.serverKey().toString()));
      appendLine(config, List.of("tls-ca-cert-file", certificates.caCertificate().toString()));
      appendLine(config, List.of("tls-auth-clients", "no"));
    } else {
      appendLine(config, List.of("port", Integer.toString(port)));
    }
    appendLine(config, List.of("bind", HOST));
    appendLine(config, List.of("dir", directory.toString()));
    appendLine(config, List.of("logfile", logFile.toString()));
    appendLine(config, List.of("daemonize", "no"));
    if (!sentinel) {
      appendLine(config, List.of("save", ""));
      appendLine(config, List.of("appendonly", "no"));
      // Redis 7 waits 5 s before a diskless full sync to batch replicas; tests want it at once.
      appendLine(config, List.of("repl-diskless-sync-delay", "0"));
      if (binary.isAtLeast(7, 0)) {
        // Fault-injection tests use DEBUG SLEEP and friends; Redis 7 disables DEBUG by default.
        appendLine(config, List.of("enable-debug-command", "local"));
      }
      if (password != null) {
        appendLine(config, List.of("requirepass", password));
        // Replicas (Sentinel, Cluster) authenticate to their master with the same password.
        appendLine(config, List.of("masterauth", password));
      }
    }
    for (List<String> line : builder.config) {
      appendLine(config, line);
    }
    return config.toString();
  }

  /** Writes a directive with every argument double-quoted, as Redis's config parser expects. */
  private static void appendLine(StringBuilder config, List<String> directiveAndArgs) {
    config.append(directiveAndArgs.get(0));
    for (String arg : directiveAndArgs.subList(1, directiveAndArgs.size())) {
      config.append(" \"");
      for (int i = 0; i < arg.length(); i++) {
        char c = arg.charAt(i);
        switch (c) {
          case '"' -> config.append("\\\"");
          case '\\' -> config.append("\\\\");
          case '\n' -> config.append("\\n");
          case '\r' -> config.append("\\r");
          default -> config.append(c);
        }
      }
      config.append('"');
    }
    config.append('\n');
  }

  private @Nullable SSLSocketFactory tlsSocketFactory() {
    return certificates == null ? null : certificates.socketFactory();
  }

  private TestCertificates requireTls() {
    if (certificates == null) {
      throw new IllegalStateException(
          this + " does not speak TLS; start it with RedisTestServer.builder().tls()");
    }
    return certificates;
  }

  private void requireRunning() {
    if (!isRunning()) {
      throw new IllegalStateException(this + ": start or restart it before sending commands");
    }
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException("redis-server on " + hostAndPort() + " is closed");
    }
  }

  private static void closeStandardInput(Process started) {
    try {
      started.getOutputStream().close();
    } catch (IOException ignored) {
      // Redis never reads its standard input; failing to close the pipe changes nothing.
    }
  }

  private static boolean awaitExit(Process process, Duration timeout) {
    try {
      return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return !process.isAlive();
    }
  }

  private static String tail(Path file) {
    if (!Files.exists(file)) {
      return "(no file)\n";
    }
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "r")) {
      long start = Math.max(0, raf.length() - LOG_TAIL_BYTES);
      byte[] bytes = new byte[Math.toIntExact(raf.length() - start)];
      raf.seek(start);
      raf.readFully(bytes);
      List<String> lines = Arrays.asList(new String(bytes, UTF_8).split("\n"));
      List<String> last = lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size());
      return last.isEmpty() ? "(empty)\n" : String.join("\n", last) + "\n";
    } catch (IOException e) {
      return "(cannot read: " + e + ")\n";
    }
  }

  static boolean portsFree(int port, boolean withClusterBus) {
    return portFree(port) && (!withClusterBus || portFree(port + CLUSTER_BUS_PORT_OFFSET));
  }

  private static boolean portFree(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  static int pickFreePort(boolean withClusterBus) {
    for (int i = 0; i < MAX_FREE_PORT_PROBES; i++) {
      int candidate = FIRST_PORT + ThreadLocalRandom.current().nextInt(PORT_RANGE);
      if (portsFree(candidate, withClusterBus)) {
        return candidate;
      }
    }
    throw new IllegalStateException(
        "no free loopback port found in "
            + FIRST_PORT
            + "-"
            + (FIRST_PORT + PORT_RANGE - 1)
            + " after "
            + MAX_FREE_PORT_PROBES
            + " tries");
  }

  /** The chosen port was taken by someone else between the check and Redis binding it. */
  private static final class PortTakenException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    PortTakenException(String message) {
      super(message);
    }
  }

  /**
   * Options for a {@link RedisTestServer}. Not thread-safe; each {@link #start()} starts a new
   * server with the options set so far.
   */
  public static final class Builder {
    private @Nullable RedisBinary binary;
    private @Nullable String password;
    private Duration startTimeout = DEFAULT_START_TIMEOUT;
    private final List<List<String>> config = new ArrayList<>();
    private final List<List<String>> startCommands = new ArrayList<>();
    private boolean sentinel;
    private boolean clusterBus;
    private boolean tls;

    private Builder() {}

    /**
     * Uses this executable instead of {@link RedisBinary#locate()}.
     *
     * @param binary the executable
     * @return this builder
     */
    public Builder binary(RedisBinary binary) {
      this.binary = Objects.requireNonNull(binary, "binary");
      return this;
    }

    /**
     * Protects the default user with a password ({@code requirepass}); the server also uses it as
     * {@code masterauth}. {@link RedisTestServer#command(String...)} authenticates with it.
     *
     * @param password the password, not empty
     * @return this builder
     */
    public Builder password(String password) {
      if (password.isEmpty()) {
        throw new IllegalArgumentException("password must not be empty");
      }
      this.password = password;
      return this;
    }

    /**
     * Adds an ACL user with every permission ({@code user NAME on >PASSWORD ~* &* +@all}). May be
     * called several times. The default user keeps its own settings.
     *
     * @param name the user name
     * @param password the user's password, not empty
     * @return this builder
     */
    public Builder aclUser(String name, String password) {
      if (name.isEmpty() || password.isEmpty() || name.chars().anyMatch(Character::isWhitespace)) {
        throw new IllegalArgumentException("ACL user name and password must be non-empty");
      }
      config.add(List.of("user", name, "on", ">" + password, "~*", "&*", "+@all"));
      return this;
    }

    /**
     * Adds a configuration directive, written as one line of the server's configuration file with
     * every value quoted, such as {@code config("maxmemory-policy", "allkeys-lru")}. The directives
     * that place the server ({@code port}, {@code bind}, {@code dir}, {@code logfile}, {@code
     * daemonize}, {@code pidfile}, {@code include}) are reserved.
     *
     * @param directive the directive name
     * @param values its arguments
     * @return this builder
     */
    public Builder config(String directive, String... values) {
      String name = directive.trim().toLowerCase(Locale.ROOT);
      if (name.isEmpty() || !name.matches("[a-z0-9-]+")) {
        throw new IllegalArgumentException("not a configuration directive: " + directive);
      }
      if (MANAGED_DIRECTIVES.contains(name)) {
        throw new IllegalArgumentException(
            "directive " + name + " is managed by RedisTestServer and cannot be set");
      }
      List<String> line = new ArrayList<>(values.length + 1);
      line.add(name);
      line.addAll(Arrays.asList(values));
      config.add(List.copyOf(line));
      return this;
    }

    /**
     * Sets how long {@link #start()} and {@link RedisTestServer#restart()} wait for the server to
     * answer {@code PING}. The default is 10 s.
     *
     * @param timeout a positive duration
     * @return this builder
     */
    public Builder startTimeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("start timeout must be positive: " + timeout);
      }
      this.startTimeout = timeout;
      return this;
    }

    /**
     * Makes the server speak TLS only: {@link #start()} generates a throwaway CA and a server
     * certificate for {@code 127.0.0.1} and {@code localhost} into the server's temporary directory
     * (with the {@code openssl} command line), and the server listens with TLS on {@link
     * RedisTestServer#port()} and on no plain-text port ({@code port 0}, {@code tls-port}). Clients
     * are not asked for certificates ({@code tls-auth-clients no}). {@link
     * RedisTestServer#command(String...)} and the readiness probe speak TLS and verify the server
     * against the CA; clients find it at {@link RedisTestServer#caCertificate()}.
     *
     * <p>For standalone servers only; the binary must be built with TLS (Debian's is; the one
     * shipped in Maven may not be), else {@link #start()} fails with the server's log.
     *
     * @return this builder
     */
    public Builder tls() {
      this.tls = true;
      return this;
    }

    /** Runs the server as a sentinel ({@code redis-server sentinel.conf --sentinel}). */
    Builder sentinel() {
      this.sentinel = true;
      return this;
    }

    /** Sends this command after every start and restart, before the server is handed out. */
    Builder onEveryStart(String... command) {
      startCommands.add(List.of(command));
      return this;
    }

    /** Also requires the cluster bus port (data port + 10000) to be free. */
    Builder clusterBus() {
      this.clusterBus = true;
      return this;
    }

    /**
     * Starts a server on a free loopback port, retrying with another port if the chosen one is
     * taken before Redis binds it, and waits until it answers {@code PING}.
     *
     * @return the running server
     * @throws IllegalStateException if no binary is found, no port can be bound, the server does
     *     not become ready in time (the message includes the tail of the server's log), or, with
     *     {@link #tls()}, {@code openssl} is not on the {@code PATH} or fails
     */
    public RedisTestServer start() {
      if (tls && (sentinel || clusterBus)) {
        throw new IllegalStateException("tls() is for standalone servers only");
      }
      RedisBinary chosen = binary != null ? binary : RedisBinary.locate();
      List<String> lostRaces = new ArrayList<>();
      for (int attempt = 0; attempt < MAX_LAUNCH_ATTEMPTS; attempt++) {
        RedisTestServer server;
        try {
          server = new RedisTestServer(this, chosen, pickFreePort(clusterBus));
        } catch (IOException e) {
          throw new UncheckedIOException("cannot create a directory for redis-server", e);
        }
        try {
          server.launch();
          return server;
        } catch (PortTakenException e) {
          server.close();
          lostRaces.add(e.getMessage());
        } catch (RuntimeException e) {
          try {
            server.close();
          } catch (RuntimeException suppressed) {
            e.addSuppressed(suppressed);
          }
          throw e;
        }
      }
      throw new IllegalStateException(
          "could not start redis-server after "
              + MAX_LAUNCH_ATTEMPTS
              + " attempts; every chosen port was taken: "
              + lostRaces);
    }
  }
}
