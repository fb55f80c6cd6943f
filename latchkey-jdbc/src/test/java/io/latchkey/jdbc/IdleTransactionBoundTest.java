package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.servers.SqlTestServer;
import io.latchkey.spi.BackendContext;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The connections that latchkey's own pool makes for its operations are ended by the server when
 * they sit inside a transaction, between two statements, for longer than the operation timeout (a
 * client stopped there would otherwise keep the name's resource row locked for every other client
 * until it resumes; the fault suite with several threads per worker found such stalls of 4–6 s on
 * PostgreSQL). A URL that sets the server option itself is obeyed.
 */
class IdleTransactionBoundTest {
  @RegisterExtension static final SqlServers SERVERS = new SqlServers();

  private static final BackendContext CONTEXT =
      new BackendContext("idle-bound", Duration.ofMillis(1500), Duration.ofSeconds(30));

  @Test
  void postgresEndsASessionIdleInATransactionForTheOperationTimeout() throws Exception {
    SqlTestServer server = SERVERS.postgres();
    Properties properties =
        JdbcBackendProvider.boundedIdleTransactions(
            SqlDialect.POSTGRESQL, server.jdbcUrl(), new Properties(), CONTEXT);
    try (Connection connection = DriverManager.getConnection(server.jdbcUrl(), properties)) {
      assertThat(show(connection, "SHOW idle_in_transaction_session_timeout")).isEqualTo("1500ms");
      assertEndedWhenIdleInATransaction(
          server,
          connection,
          "SELECT pg_backend_pid()",
          "SELECT 1",
          "SELECT count(*) FROM pg_stat_activity WHERE pid = ");
    }
  }

  @Test
  void mariaDbEndsASessionIdleInATransactionForTheOperationTimeout() throws Exception {
    SqlTestServer server = SERVERS.mariaDb();
    Properties properties =
        JdbcBackendProvider.boundedIdleTransactions(
            SqlDialect.MARIADB, server.jdbcUrl(), new Properties(), CONTEXT);
    try (Connection connection = DriverManager.getConnection(server.jdbcUrl(), properties)) {
      // In whole seconds, rounded up.
      assertThat(show(connection, "SELECT @@SESSION.idle_transaction_timeout")).isEqualTo("2");
      assertEndedWhenIdleInATransaction(
          server,
          connection,
          "SELECT CONNECTION_ID()",
          // A statement on no table starts no transaction there.
          "START TRANSACTION",
          "SELECT count(*) FROM information_schema.processlist WHERE id = ");
    }
  }

  /**
   * A {@code jdbc:mysql:} URL may reach MySQL, which has no such variable and would refuse a
   * session that sets it: nothing is set, and the session keeps the server's default (here
   * MariaDB's, none, through MySQL's own driver). docs/backends/jdbc.md says what bounds a stalled
   * transaction there.
   */
  @Test
  void aJdbcMysqlUrlSetsNoMariaDbOnlyVariable() throws Exception {
    String url = MariaDbDriver.MYSQL.url(SERVERS.mariaDb().jdbcUrl());
    Properties properties =
        JdbcBackendProvider.boundedIdleTransactions(
            SqlDialect.MARIADB, url, new Properties(), CONTEXT);
    assertThat(properties).doesNotContainKey("sessionVariables");
    try (Connection connection = DriverManager.getConnection(url, properties)) {
      assertThat(show(connection, "SELECT @@SESSION.idle_transaction_timeout")).isEqualTo("0");
    }
  }

  @Test
  void aUrlThatSetsTheOptionItselfIsObeyed() {
    String url = SERVERS.postgres().jdbcUrl() + "&options=-c%20statement_timeout=5000";
    assertThat(
            JdbcBackendProvider.boundedIdleTransactions(
                    SqlDialect.POSTGRESQL, url, new Properties(), CONTEXT)
                .getProperty("options"))
        .isNull();
  }

  /**
   * Opens a transaction on the connection and leaves it idle; another connection watches the server
   * end that session (asking on the idle connection itself would reset its idle time).
   */
  private static void assertEndedWhenIdleInATransaction(
      SqlTestServer server,
      Connection connection,
      String ownId,
      String begin,
      String sessionsWithId)
      throws SQLException {
    String id = show(connection, ownId);
    try (Connection watcher = DriverManager.getConnection(server.jdbcUrl())) {
      assertThat(show(watcher, sessionsWithId + id)).isEqualTo("1");
      connection.setAutoCommit(false);
      try (Statement statement = connection.createStatement()) {
        statement.execute(begin);
      }
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> show(watcher, sessionsWithId + id).equals("0"));
    }
  }

  private static String show(Connection connection, String query) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery(query)) {
      rows.next();
      return rows.getString(1);
    }
  }
}
