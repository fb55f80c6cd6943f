package io.latchkey.cli;

import io.latchkey.servers.MariaDbTestServer;
import io.latchkey.servers.PostgresTestServer;
import io.latchkey.servers.RedisTestServer;
import io.latchkey.servers.SqlTestServer;
import java.io.IOException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * The servers {@code latchkey demo} can start for itself ({@code --backend redis}, {@code
 * postgres}, {@code mariadb}, {@code zookeeper}; Redis without a backend): each on a free loopback
 * port, reachable by the demo's worker processes, and stopped (its data deleted) when the demo
 * ends. Redis, PostgreSQL and MariaDB run as server processes of the binaries installed on the
 * machine (latchkey-servers finds them; Redis falls back to a binary shipped in the jar); ZooKeeper
 * runs inside the demo's JVM (Curator's testing server), which the workers reach over the loopback
 * like any ZooKeeper.
 */
enum DemoServer {
  REDIS("redis") {
    @Override
    Running start() {
      RedisTestServer redis = RedisTestServer.start();
      return new Running(
          redis.uri(),
          "an embedded redis-server " + redis.binary().version() + ", stopped after the demo",
          redis::close);
    }
  },
  POSTGRES("postgres") {
    @Override
    Running start() {
      return sql(PostgresTestServer.start(), "an embedded PostgreSQL server");
    }
  },
  MARIADB("mariadb") {
    @Override
    Running start() {
      return sql(MariaDbTestServer.start(), "an embedded MariaDB server");
    }
  },
  ZOOKEEPER("zookeeper") {
    @Override
    Running start() {
      TestingServer zookeeper;
      try {
        // Free ports, a temporary directory deleted at close, no limit on connections from one
        // address (every worker connects from the loopback).
        zookeeper = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, -1, 0), true);
      } catch (Exception e) {
        throw new IllegalStateException(
            "the embedded ZooKeeper server did not start: " + OneLineErrors.describe(e), e);
      }
      return new Running(
          "zookeeper://" + zookeeper.getConnectString() + "/latchkey-demo",
          "an embedded ZooKeeper server in this process, stopped after the demo",
          () -> {
            try {
              zookeeper.close();
            } catch (IOException e) {
              // Its temporary directory may be left behind; nothing else is.
            }
          });
    }
  };

  /** A started server: the URI to give every client, a note for the output, and how to stop it. */
  record Running(String uri, String note, Runnable stop) implements AutoCloseable {
    @Override
    public void close() {
      stop.run();
    }
  }

  private final String keyword;

  DemoServer(String keyword) {
    this.keyword = keyword;
  }

  /**
   * @return the server's keyword, as {@code --backend} takes it
   */
  String keyword() {
    return keyword;
  }

  /**
   * Starts the server; returns once it accepts connections.
   *
   * @throws IllegalStateException if it cannot start (its binaries are not installed, say)
   */
  abstract Running start();

  /**
   * @param backend what was given as {@code --backend}
   * @return the server it names, if it is a keyword ({@code postgresql} is taken for {@code
   *     postgres}) rather than a URI
   */
  static Optional<DemoServer> named(String backend) {
    String lower = backend.toLowerCase(Locale.ROOT);
    String keyword = lower.equals("postgresql") ? "postgres" : lower;
    return Arrays.stream(values()).filter(server -> server.keyword.equals(keyword)).findFirst();
  }

  /**
   * @return the keywords, for help and messages: {@code redis, postgres, mariadb, zookeeper}
   */
  static String keywords() {
    return Arrays.stream(values()).map(DemoServer::keyword).collect(Collectors.joining(", "));
  }

  /** The database's URL, with latchkey's tables created by the first client that connects. */
  private static Running sql(SqlTestServer server, String what) {
    String uri = server.jdbcUrl() + "&latchkey.createSchema=true";
    return new Running(uri, what + ", stopped after the demo", server::close);
  }
}
