package io.latchkey.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.SQLException;
import org.h2.tools.Server;

/**
 * An H2 database in server mode, in this JVM, on a free loopback port: other JVMs reach it too. The
 * database lives in memory, as long as the server. {@link H2ProcessServer} runs one in a JVM of its
 * own, on files, for tests that crash it.
 */
final class H2TestServer implements AutoCloseable {
  private final int port;
  private final String database;
  private final Server server;

  private H2TestServer(int port, String database) {
    this.port = port;
    this.database = database;
    try {
      this.server =
          Server.createTcpServer("-tcpPort", String.valueOf(port), "-ifNotExists").start();
    } catch (SQLException e) {
      throw new IllegalStateException("H2 did not start on port " + port, e);
    }
  }

  static H2TestServer start(String database) {
    return new H2TestServer(freePort(), database);
  }

  int port() {
    return port;
  }

  /** The JDBC URL of the in-memory database. */
  String jdbcUrl() {
    return "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:" + database + ";DB_CLOSE_DELAY=-1";
  }

  @Override
  public void close() {
    server.stop();
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
