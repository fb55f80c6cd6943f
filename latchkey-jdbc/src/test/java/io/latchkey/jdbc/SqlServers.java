package io.latchkey.jdbc;

import io.latchkey.servers.MariaDbTestServer;
import io.latchkey.servers.PostgresTestServer;
import io.latchkey.servers.SqlTestServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A PostgreSQL and a MariaDB server for one test class, started before its first test and deleted
 * after its last: {@code @RegisterExtension static final SqlServers SERVERS = new SqlServers();}.
 */
final class SqlServers implements BeforeAllCallback, AfterAllCallback {
  private @Nullable PostgresTestServer postgres;
  private @Nullable MariaDbTestServer mariaDb;

  @Override
  public void beforeAll(ExtensionContext context) {
    postgres = PostgresTestServer.start();
    mariaDb = MariaDbTestServer.start();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (postgres != null) {
      postgres.close();
      postgres = null;
    }
    if (mariaDb != null) {
      mariaDb.close();
      mariaDb = null;
    }
  }

  PostgresTestServer postgres() {
    return running(postgres);
  }

  MariaDbTestServer mariaDb() {
    return running(mariaDb);
  }

  /**
   * @param dialect {@link SqlDialect#POSTGRESQL} or {@link SqlDialect#MARIADB}
   * @return the server of that database
   */
  SqlTestServer server(SqlDialect dialect) {
    return switch (dialect) {
      case POSTGRESQL -> postgres();
      case MARIADB -> mariaDb();
      case H2 -> throw new IllegalArgumentException("H2 runs in the test's own JVM");
    };
  }

  /** What an operator does to a server's sessions, through a connection of the test's own. */
  @FunctionalInterface
  interface Killer {
    void kill(Connection admin) throws SQLException;
  }

  /**
   * Ends the sessions of a PostgreSQL server that match a condition, as an operator would, and
   * waits (up to 5 s each) until they have ended.
   *
   * @param admin a connection of the test's own, which is spared
   * @param where a condition on {@code pg_stat_activity}
   */
  static void endPostgresSessions(Connection admin, String where) throws SQLException {
    try (Statement statement = admin.createStatement()) {
      statement
          .executeQuery(
              "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE "
                  + where
                  + " AND pid <> pg_backend_pid()")
          .close();
    }
  }

  /**
   * Ends ({@code KILL CONNECTION}) every session of a MariaDB server in the database of {@code
   * admin}, as an operator would.
   *
   * @param admin a connection of the test's own, which is spared
   * @return how many sessions were ended
   */
  static int endMariaDbSessions(Connection admin) throws SQLException {
    List<Long> others = new ArrayList<>();
    try (Statement select = admin.createStatement();
        ResultSet rs =
            select.executeQuery(
                "SELECT ID FROM information_schema.PROCESSLIST"
                    + " WHERE ID <> CONNECTION_ID() AND DB = DATABASE()")) {
      while (rs.next()) {
        others.add(rs.getLong(1));
      }
    }
    for (long id : others) {
      try (Statement kill = admin.createStatement()) {
        kill.execute("KILL CONNECTION " + id);
      }
    }
    return others.size();
  }

  private static <T> T running(@Nullable T server) {
    if (server == null) {
      throw new IllegalStateException("the servers are started before a test class's first test");
    }
    return server;
  }
}
