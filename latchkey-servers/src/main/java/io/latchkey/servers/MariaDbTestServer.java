package io.latchkey.servers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A MariaDB server for tests: {@code mariadbd} (or {@code mysqld}) from {@code /usr/sbin} or PATH,
 * with a data directory made by {@code mariadb-install-db} in a temporary directory, listening on a
 * free loopback port. It runs without grant tables ({@code --skip-grant-tables}: any user, no
 * password, every privilege) and without durability settings that only slow tests down. The
 * database {@code latchkey} exists from the start.
 */
public final class MariaDbTestServer extends SqlTestServer {
  private final Path daemon;
  private final Path installer;

  private MariaDbTestServer(Path daemon, Path installer) {
    super("mariadb");
    this.daemon = daemon;
    this.installer = installer;
  }

  /**
   * @return a running server
   * @throws IllegalStateException if no MariaDB is installed or it does not start
   */
  public static MariaDbTestServer start() {
    Path daemon = daemon();
    Path installer = installer();
    if (daemon == null || installer == null) {
      throw new IllegalStateException(
          "no MariaDB (mariadbd and mariadb-install-db) in /usr/sbin, /usr/bin or on PATH;"
              + " install the mariadb-server package");
    }
    MariaDbTestServer server = new MariaDbTestServer(daemon, installer);
    return initialiseAndLaunch(server, "MariaDB");
  }

  /**
   * @return true if MariaDB is installed
   */
  public static boolean isAvailable() {
    return daemon() != null && installer() != null;
  }

  private static @Nullable Path daemon() {
    return locate(List.of("mariadbd", "mysqld"), List.of(Path.of("/usr/sbin")));
  }

  private static @Nullable Path installer() {
    return locate(
        List.of("mariadb-install-db", "mysql_install_db"),
        List.of(Path.of("/usr/bin"), Path.of("/usr/sbin")));
  }

  @Override
  protected void initialise() throws IOException {
    run(
        List.of(
            installer.toString(),
            "--no-defaults",
            "--datadir=" + dataDirectory(),
            "--user=" + System.getProperty("user.name"),
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve"));
    // A directory in the data directory is a database.
    Files.createDirectories(dataDirectory().resolve("latchkey"));
  }

  @Override
  protected List<String> serverCommand() {
    return List.of(
        daemon.toString(),
        "--no-defaults",
        "--datadir=" + dataDirectory(),
        "--user=" + System.getProperty("user.name"),
        "--port=" + port(),
        "--bind-address=" + RedisTestServer.HOST,
        "--socket=" + directory().resolve("mysqld.sock"),
        "--pid-file=" + directory().resolve("mysqld.pid"),
        "--skip-grant-tables",
        "--skip-name-resolve",
        "--skip-log-bin",
        "--innodb-buffer-pool-size=32M",
        "--innodb-log-file-size=16M",
        "--innodb-flush-log-at-trx-commit=2",
        "--innodb-doublewrite=0",
        "--max-connections=300",
        "--character-set-server=utf8mb4",
        "--collation-server=utf8mb4_bin");
  }

  @Override
  protected String readyLine() {
    return "ready for connections";
  }

  @Override
  protected String stopSignal() {
    return "TERM";
  }

  @Override
  public String jdbcUrl() {
    return "jdbc:mariadb://" + RedisTestServer.HOST + ":" + port() + "/latchkey?user=root";
  }
}
