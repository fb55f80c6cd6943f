package io.latchkey.cli;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.servers.MariaDbTestServer;
import io.latchkey.servers.PostgresTestServer;
import io.latchkey.servers.RedisTestServer;
import io.latchkey.servers.SqlTestServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * A server of one backend family that a test class starts itself (PostgreSQL, MariaDB, ZooKeeper),
 * URIs on it that keep each test's records apart, and clients of the test JVM on it.
 */
abstract class ServerForTests implements AutoCloseable {
  private static final AtomicInteger NAMESPACES = new AtomicInteger();

  private final List<Latchkey> clients = new ArrayList<>();

  /**
   * @return a URI whose records no other test sees (a table prefix, a namespace)
   */
  final String freshUri() {
    return uri("t" + NAMESPACES.incrementAndGet());
  }

  /**
   * @param namespace the table prefix or namespace
   * @return the URI of this server with that namespace
   */
  abstract String uri(String namespace);

  /**
   * @return the URI with a user and password in its authority ({@code //user:password@host})
   */
  abstract String withCredentials(String uri, String password);

  /**
   * @return a URI of this family, with a password, on a port where nothing listens
   */
  abstract String unreachable(String password) throws IOException;

  /** Stops the server. */
  abstract void stop();

  /** A client of the test JVM, closed with the server, whose watchdog lease is short. */
  final Latchkey client(String uri) {
    Latchkey client =
        Latchkey.connect(
            uri,
            LatchkeyOptions.builder()
                .leaseTime(RedisForTests.CLIENT_LEASE)
                .closeOnShutdown(false)
                .build());
    clients.add(client);
    return client;
  }

  @Override
  public final void close() {
    clients.forEach(Latchkey::close);
    stop();
  }

  /** A loopback port nobody listens on (it was free a moment ago). */
  static int closedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  static ServerForTests postgres() {
    return new Sql(PostgresTestServer.start(), "jdbc:postgresql://", "latchkey");
  }

  static ServerForTests mariaDb() {
    return new Sql(MariaDbTestServer.start(), "jdbc:mariadb://", "root");
  }

  static ServerForTests zooKeeper() {
    return new ZooKeeper();
  }

  static ServerForTests redisQuorum() {
    return new RedisQuorum();
  }

  /**
   * A quorum of three {@code redis-server}s that ask for a password, so that every URI carries it
   * in each member and the commands must never print it; each test has a key prefix of its own.
   */
  private static final class RedisQuorum extends ServerForTests {
    private final List<RedisTestServer> members = new ArrayList<>();

    RedisQuorum() {
      try {
        for (int i = 0; i < 3; i++) {
          members.add(RedisTestServer.builder().password(SharedBackendCommands.PASSWORD).start());
        }
      } catch (RuntimeException e) {
        stop();
        throw e;
      }
    }

    @Override
    String uri(String namespace) {
      return "quorum:"
          + members.stream()
              .map(
                  member ->
                      "redis://:"
                          + SharedBackendCommands.PASSWORD
                          + "@"
                          + member.hostAndPort()
                          + "?prefix="
                          + namespace
                          + ":")
              .collect(Collectors.joining(","))
          + ";maxLease=15m"; // above the shared tests' longest lease (10 minutes)
    }

    @Override
    String withCredentials(String uri, String password) {
      if (!password.equals(SharedBackendCommands.PASSWORD)) {
        throw new IllegalArgumentException("the members ask for " + SharedBackendCommands.PASSWORD);
      }
      return uri; // every member's URI carries the password already
    }

    @Override
    String unreachable(String password) throws IOException {
      List<String> closed = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        closed.add("redis://:" + password + "@127.0.0.1:" + closedPort());
      }
      return "quorum:" + String.join(",", closed);
    }

    @Override
    void stop() {
      members.forEach(RedisTestServer::close);
    }
  }

  /** A database in table mode: each test has tables of its own (a table prefix). */
  private static final class Sql extends ServerForTests {
    private final SqlTestServer server;
    private final String scheme;
    private final String user;

    Sql(SqlTestServer server, String scheme, String user) {
      this.server = server;
      this.scheme = scheme;
      this.user = user;
    }

    @Override
    String uri(String namespace) {
      return server.jdbcUrl()
          + "&latchkey.createSchema=true&latchkey.tablePrefix="
          + namespace
          + "_";
    }

    @Override
    String withCredentials(String uri, String password) {
      return uri.replace(scheme, scheme + user + ":" + password + "@");
    }

    @Override
    String unreachable(String password) throws IOException {
      return scheme + user + ":" + password + "@127.0.0.1:" + closedPort() + "/latchkey";
    }

    @Override
    void stop() {
      server.close();
    }
  }

  /**
   * An in-process ZooKeeper server (Curator's testing server, as latchkey-zookeeper's tests use),
   * with a short tick so that clients may ask for short sessions; each test has a namespace of its
   * own.
   */
  private static final class ZooKeeper extends ServerForTests {
    private static final int TICK_MILLIS = 200;
    private final TestingServer server;

    ZooKeeper() {
      try {
        server =
            new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, TICK_MILLIS, 0), true);
      } catch (Exception e) {
        throw new IllegalStateException("cannot start a ZooKeeper test server", e);
      }
    }

    @Override
    String uri(String namespace) {
      return "zookeeper://" + server.getConnectString() + "/" + namespace + "?sessionTimeout=3s";
    }

    @Override
    String withCredentials(String uri, String password) {
      return uri.replace("zookeeper://", "zookeeper://app:" + password + "@");
    }

    @Override
    String unreachable(String password) throws IOException {
      return "zookeeper://app:" + password + "@127.0.0.1:" + closedPort() + "/latchkey";
    }

    @Override
    void stop() {
      try {
        server.close();
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }
}
