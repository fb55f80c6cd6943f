package io.latchkey.servers;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A PostgreSQL server for tests: {@code initdb} and {@code postgres} from {@code
 * /usr/lib/postgresql/<newest>/bin} or PATH, a fresh cluster in a temporary directory (trust
 * authentication for the user {@code latchkey}, no fsync), listening on a free loopback port and a
 * socket in its own directory.
 *
 * <pre>{@code
 * try (PostgresTestServer pg = PostgresTestServer.start()) {
 *   connect(pg.jdbcUrl());             // jdbc:postgresql://127.0.0.1:PORT/postgres?user=latchkey
 *   pg.restart();                      // same port, same data
 * }
 * }</pre>
 */
public final class PostgresTestServer extends SqlTestServer {
  private static final String SYSTEM_USER = "postgres";
  private final Path bin;

  private PostgresTestServer(Path bin) {
    super("postgres");
    this.bin = bin;
  }

  /**
   * @return a running server with an empty cluster
   * @throws IllegalStateException if no PostgreSQL binaries are found or the server does not start
   */
  public static PostgresTestServer start() {
    Path initdb = binaries();
    if (initdb == null) {
      throw new IllegalStateException(
          "no PostgreSQL binaries (initdb, postgres) in /usr/lib/postgresql/*/bin or on PATH;"
              + " install the postgresql package");
    }
    PostgresTestServer server =
        new PostgresTestServer(java.util.Objects.requireNonNull(initdb.getParent()));
    return initialiseAndLaunch(server, "PostgreSQL");
  }

  /**
   * @return true if PostgreSQL binaries are installed
   */
  public static boolean isAvailable() {
    return binaries() != null;
  }

  private static @Nullable Path binaries() {
    List<Path> versions = new ArrayList<>();
    Path root = Path.of("/usr/lib/postgresql");
    if (Files.isDirectory(root)) {
      try (DirectoryStream<Path> children = Files.newDirectoryStream(root)) {
        children.forEach(child -> versions.add(child.resolve("bin")));
      } catch (IOException ignored) {
        // Fall back to PATH.
      }
    }
    versions.sort((a, b) -> Integer.compare(versionOf(b), versionOf(a)));
    return locate(List.of("initdb"), versions);
  }

  /** The major version of {@code /usr/lib/postgresql/<version>/bin}. */
  private static int versionOf(Path bin) {
    Path version = bin.getParent();
    try {
      return version == null ? 0 : Integer.parseInt(String.valueOf(version.getFileName()));
    } catch (NumberFormatException notANumber) {
      return 0;
    }
  }

  @Override
  protected void initialise() throws IOException {
    chown(directory(), SYSTEM_USER);
    run(
        asUser(
            SYSTEM_USER,
            List.of(
                bin.resolve("initdb").toString(),
                "-D",
                dataDirectory().toString(),
                "-U",
                "latchkey",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync")));
  }

  @Override
  protected List<String> serverCommand() {
    return asUser(
        SYSTEM_USER,
        List.of(
            bin.resolve("postgres").toString(),
            "-D",
            dataDirectory().toString(),
            "-p",
            String.valueOf(port()),
            "-k",
            directory().toString(),
            "-c",
            "listen_addresses=" + RedisTestServer.HOST,
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
            "-c",
            "max_connections=300",
            "-c",
            "shared_buffers=32MB"));
  }

  @Override
  protected String readyLine() {
    return "ready to accept connections";
  }

  @Override
  protected String stopSignal() {
    // SIGINT is PostgreSQL's fast shutdown; SIGTERM would wait for every client to leave.
    return "INT";
  }

  @Override
  public String jdbcUrl() {
    return "jdbc:postgresql://" + RedisTestServer.HOST + ":" + port() + "/postgres?user=latchkey";
  }
}
