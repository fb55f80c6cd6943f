package io.latchkey.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.stream.Stream;
import org.h2.tools.Server;
import org.jspecify.annotations.Nullable;

/**
 * An H2 database in server mode, in this JVM, on a free loopback port: other JVMs reach it too. The
 * database lives in memory ({@link #start}) or in a file of a throwaway directory ({@link
 * #startFile}), which a {@link #kill()} and {@link #restart()} keep.
 */
final class H2TestServer implements AutoCloseable {
  private final int port;
  private final String database;
  private final @Nullable Path directory;
  private volatile Server server;

  private H2TestServer(int port, String database, @Nullable Path directory) {
    this.port = port;
    this.database = database;
    this.directory = directory;
    this.server = listen(port);
  }

  static H2TestServer start(String database) {
    return new H2TestServer(freePort(), database, null);
  }

  /**
   * @param database the database's file name in a new temporary directory that {@link #close()}
   *     deletes
   * @return a server whose database survives {@link #kill()} and {@link #restart()}
   */
  static H2TestServer startFile(String database) {
    try {
      Path directory = Files.createTempDirectory("latchkey-h2-").toAbsolutePath();
      return new H2TestServer(freePort(), database, directory);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Server listen(int port) {
    try {
      return Server.createTcpServer("-tcpPort", String.valueOf(port), "-ifNotExists").start();
    } catch (SQLException e) {
      throw new IllegalStateException("H2 did not start on port " + port, e);
    }
  }

  int port() {
    return port;
  }

  /** The JDBC URL of the database: in memory it lives as long as the server, in a file longer. */
  String jdbcUrl() {
    String base = "jdbc:h2:tcp://127.0.0.1:" + port + "/";
    if (directory == null) {
      return base + "mem:" + database + ";DB_CLOSE_DELAY=-1";
    }
    return base + directory.resolve(database);
  }

  /**
   * Stops the TCP server, which cuts every client's connection and rolls back its open transaction,
   * then closes the database file (committed data stays in it), so that {@link #restart()} opens it
   * again as a restarted database server would. Only for a file database.
   */
  void kill() {
    if (directory == null) {
      throw new IllegalStateException("an in-memory database would not survive a restart");
    }
    server.stop();
    // The database object can outlive the TCP sessions in this JVM; SHUTDOWN closes it for sure.
    try (Connection connection =
            DriverManager.getConnection("jdbc:h2:" + directory.resolve(database));
        Statement statement = connection.createStatement()) {
      statement.execute("SHUTDOWN");
    } catch (SQLException e) {
      throw new IllegalStateException("H2 did not shut down its database", e);
    }
  }

  /** Listens again on the same port after {@link #kill()}. */
  void restart() {
    server = listen(port);
  }

  @Override
  public void close() {
    server.stop();
    if (directory != null) {
      try (Stream<Path> files = Files.walk(directory)) {
        for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(file);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
