package io.latchkey.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.SQLException;
import org.h2.tools.Server;

/** An H2 database in server mode, in this JVM, on a free loopback port: other JVMs reach it too. */
final class H2TestServer implements AutoCloseable {
  private final Server server;
  private final String database;

  private H2TestServer(Server server, String database) {
    this.server = server;
    this.database = database;
  }

  static H2TestServer start(String database) {
    try {
      Server server =
          Server.createTcpServer("-tcpPort", String.valueOf(freePort()), "-ifNotExists").start();
      return new H2TestServer(server, database);
    } catch (SQLException e) {
      throw new IllegalStateException("H2 did not start", e);
    }
  }

  /** The JDBC URL of the in-memory database, which lives as long as the server. */
  String jdbcUrl() {
    return "jdbc:h2:tcp://127.0.0.1:"
        + server.getPort()
        + "/mem:"
        + database
        + ";DB_CLOSE_DELAY=-1";
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
