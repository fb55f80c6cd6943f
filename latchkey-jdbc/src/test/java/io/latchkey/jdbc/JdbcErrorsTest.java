package io.latchkey.jdbc;

import static io.latchkey.jdbc.FaultClients.OPERATION_TIMEOUT;
import static io.latchkey.jdbc.FaultClients.connect;
import static io.latchkey.jdbc.FaultClients.unavailableWithinBound;
import static io.latchkey.jdbc.FaultClients.uniqueName;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.BackendTimeoutException;
import io.latchkey.BackendUnavailableException;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.jdbc.FaultClients.Closer;
import io.latchkey.jdbc.FaultClients.WatchedLease;
import io.latchkey.servers.FreezableTcpProxy;
import io.latchkey.servers.MariaDbTestServer;
import io.latchkey.servers.PostgresTestServer;
import io.latchkey.servers.SqlTestServer;
import io.latchkey.testkit.WatchdogTally;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Databases that cannot do what latchkey asks, on real PostgreSQL and MariaDB servers that the test
 * starts (issue 9): down, silent, read-only, out of connections, slow, or without latchkey's
 * tables; MariaDB's cases also through MySQL's own driver ({@code jdbc:mysql:}, {@link
 * MariaDbDriver}), whose errors latchkey reads the same. Each gives {@link
 * BackendUnavailableException} (or {@link BackendTimeoutException}) within the operation timeout,
 * or for missing tables an error that names the SQL file to run; and a lease already held stays
 * valid through a trouble shorter than the lease, and is released cleanly afterwards.
 */
class JdbcErrorsTest {
  /** Outlasts each trouble below by far, so that a holder keeps its lease through it. */
  private static final Duration HOLDER_LEASE = Duration.ofSeconds(10);

  @RegisterExtension static final SqlServers SERVERS = new SqlServers();

  private static void execute(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }

  private static int unusedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  @Test
  void databaseThatIsDownFailsWithinTheBound() throws Exception {
    int port = unusedPort();
    for (String url :
        new String[] {
          "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=latchkey",
          "jdbc:mariadb://127.0.0.1:" + port + "/latchkey?user=root",
          "jdbc:mysql://127.0.0.1:" + port + "/latchkey?user=root"
        }) {
      unavailableWithinBound(() -> connect(url).close());
    }
  }

  @Test
  void postgresThatDoesNotAnswerFailsWithinTheBound() throws Exception {
    assertSilentDatabaseFailsWithinTheBound(SERVERS.postgres(), UnaryOperator.identity());
  }

  @ParameterizedTest
  @EnumSource(MariaDbDriver.class)
  void mariaDbThatDoesNotAnswerFailsWithinTheBound(MariaDbDriver driver) throws Exception {
    assertSilentDatabaseFailsWithinTheBound(SERVERS.mariaDb(), driver::url);
  }

  /**
   * A database that accepts connections but never answers: opening fails within the bound.
   *
   * @param driverUrl the server's URL (through the proxy) for the driver under test
   */
  private static void assertSilentDatabaseFailsWithinTheBound(
      SqlTestServer server, UnaryOperator<String> driverUrl) throws Exception {
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", server.port())) {
      proxy.freeze();
      String url = driverUrl.apply(FaultClients.throughProxy(server, proxy));
      unavailableWithinBound(() -> connect(url).close());
    }
  }

  /**
   * A PostgreSQL database turned read-only (as a replica after a fail-over is): a new acquire fails
   * within the bound and says why; the holder's renewals fail meanwhile, but its lease, good for
   * longer than the episode, stays valid, is renewed once the database is writable again, and its
   * release works.
   */
  @Test
  void postgresReadOnlyDatabaseRefusesWritesAndKeepsHeldLeases() throws Exception {
    PostgresTestServer server = SERVERS.postgres();
    String database = "readonly_db";
    String url =
        server.jdbcUrl().replace("/postgres?", "/" + database + "?")
            + "&latchkey.createSchema=true";
    String name = uniqueName("read-only");
    WatchdogTally renewals = new WatchdogTally();
    try (Closer closer = new Closer()) {
      Connection admin = closer.add(DriverManager.getConnection(server.jdbcUrl()));
      execute(admin, "CREATE DATABASE " + database);
      Latchkey holder = closer.add(connect(url, HOLDER_LEASE, renewals));
      WatchedLease held = new WatchedLease(holder, renewals, name);

      // The setting reaches new sessions only: end the holder's, so that its pool opens new ones.
      execute(admin, "ALTER DATABASE " + database + " SET default_transaction_read_only = on");
      SqlServers.endPostgresSessions(admin, "datname = '" + database + "'");
      Latchkey other = closer.add(connect(url));
      assertThat(unavailableWithinBound(() -> other.lock(name + "/other").acquire(Duration.ZERO)))
          .hasMessageContaining("read-only");
      held.outlivesAFailedRenewal();

      execute(admin, "ALTER DATABASE " + database + " RESET default_transaction_read_only");
      SqlServers.endPostgresSessions(admin, "datname = '" + database + "'");
      held.isRenewedAgain();
      // A new client: the other one's connections were ended too.
      held.passesOnTo(closer.add(connect(url)));
    }
  }

  /**
   * MariaDB with {@code read_only} set, for a user without the right to write anyway ({@code READ
   * ONLY ADMIN}, which root has): the same as PostgreSQL's read-only database, through either
   * driver.
   */
  @ParameterizedTest
  @EnumSource(MariaDbDriver.class)
  void mariaDbReadOnlyServerRefusesWritesAndKeepsHeldLeases(MariaDbDriver driver) throws Exception {
    MariaDbTestServer server = SERVERS.mariaDb();
    String url =
        driver.url(server.jdbcUrl().replace("user=root", "user=app"))
            + "&latchkey.createSchema=true";
    String name = uniqueName("read-only");
    WatchdogTally renewals = new WatchdogTally();
    try (Closer closer = new Closer()) {
      Connection admin = closer.add(DriverManager.getConnection(server.jdbcUrl()));
      // The test server skips the grant tables (everyone may do anything): load them, which keeps
      // root's rights and lets a user of lesser rights exist.
      execute(admin, "FLUSH PRIVILEGES");
      execute(admin, "CREATE USER IF NOT EXISTS app@'127.0.0.1'");
      execute(admin, "GRANT ALL ON latchkey.* TO app@'127.0.0.1'");
      Latchkey holder = closer.add(connect(url, HOLDER_LEASE, renewals));
      Latchkey other = closer.add(connect(url));
      WatchedLease held = new WatchedLease(holder, renewals, name);

      execute(admin, "SET GLOBAL read_only = 1");
      try {
        assertThat(unavailableWithinBound(() -> other.lock(name + "/other").acquire(Duration.ZERO)))
            .hasMessageContaining("read-only");
        held.outlivesAFailedRenewal();
      } finally {
        execute(admin, "SET GLOBAL read_only = 0");
      }

      held.isRenewedAgain();
      held.passesOnTo(other);
    }
  }

  /**
   * PostgreSQL refusing new connections (the role's connection limit reached, as when other
   * applications took every slot): an operation that needs a new connection, and opening a client,
   * fail within the bound; a held lease stays valid and is renewed once connections are let in.
   */
  @Test
  void postgresOutOfConnectionsFailsWithinTheBoundAndKeepsHeldLeases() throws Exception {
    PostgresTestServer server = SERVERS.postgres();
    String url =
        server.jdbcUrl().replace("/postgres?user=latchkey", "/crowded_db?user=crowded")
            + "&latchkey.createSchema=true";
    String name = uniqueName("crowded");
    WatchdogTally renewals = new WatchdogTally();
    try (Closer closer = new Closer()) {
      Connection admin = closer.add(DriverManager.getConnection(server.jdbcUrl()));
      // Superusers are exempt from connection limits: latchkey connects as a plain user.
      execute(admin, "CREATE ROLE crowded LOGIN");
      execute(admin, "CREATE DATABASE crowded_db OWNER crowded");
      Latchkey holder = closer.add(connect(url, HOLDER_LEASE, renewals));
      WatchedLease held = new WatchedLease(holder, renewals, name);

      execute(admin, "ALTER ROLE crowded CONNECTION LIMIT 0");
      SqlServers.endPostgresSessions(admin, "usename = 'crowded'");
      // The first operation may meet a pooled connection that was ended: it fails (as it must: it
      // cannot know that its statement was not run), and the pool drops every idle one.
      unavailableWithinBound(() -> holder.lock(name + "/first").acquire(Duration.ZERO));
      assertThat(unavailableWithinBound(() -> holder.lock(name + "/other").acquire(Duration.ZERO)))
          .hasMessageContaining("too many connections");
      unavailableWithinBound(() -> connect(url).close());
      held.outlivesAFailedRenewal();

      execute(admin, "ALTER ROLE crowded CONNECTION LIMIT -1");
      held.isRenewedAgain();
      held.passesOnTo(closer.add(connect(url)));
    }
  }

  /**
   * PostgreSQL that stalls every statement on latchkey's holder table (an exclusive table lock
   * taken by someone else, as a long migration would): operations time out within the bound, the
   * holder's renewals fail, and once the stall ends (shorter than the lease) the lease is renewed
   * and was never lost.
   */
  @Test
  void postgresStalledTableTimesOutWithinTheBoundAndKeepsHeldLeases() throws Exception {
    PostgresTestServer server = SERVERS.postgres();
    String url = server.jdbcUrl() + "&latchkey.createSchema=true";
    String name = uniqueName("stalled");
    WatchdogTally renewals = new WatchdogTally();
    try (Closer closer = new Closer()) {
      Latchkey holder = closer.add(connect(url, HOLDER_LEASE, renewals));
      Latchkey other = closer.add(connect(url));
      WatchedLease held = new WatchedLease(holder, renewals, name);

      Connection blocker = closer.add(DriverManager.getConnection(server.jdbcUrl()));
      blocker.setAutoCommit(false);
      execute(blocker, "LOCK TABLE latchkey_holders IN ACCESS EXCLUSIVE MODE");
      try {
        FaultClients.failsWithinBound(
            OPERATION_TIMEOUT,
            BackendTimeoutException.class,
            () -> other.lock(name).acquire(Duration.ZERO));
        held.outlivesAFailedRenewal();
      } finally {
        blocker.rollback();
      }

      held.isRenewedAgain();
      held.passesOnTo(other);
    }
  }

  @Test
  void postgresMissingTablesNameTheFileToRun() throws Exception {
    assertMissingTablesNameTheFile(
        SERVERS.postgres(), UnaryOperator.identity(), "postgresql.sql", " CASCADE");
  }

  @ParameterizedTest
  @EnumSource(MariaDbDriver.class)
  void mariaDbMissingTablesNameTheFileToRun(MariaDbDriver driver) throws Exception {
    assertMissingTablesNameTheFile(SERVERS.mariaDb(), driver::url, "mariadb.sql", "");
  }

  /**
   * Tables made by a latchkey before the sole holder's columns (PostgreSQL): opening without
   * createSchema names the file to run, whose {@code ALTER TABLE … IF NOT EXISTS} lines add them;
   * opening with it adds them, and the lock then works.
   */
  @Test
  void postgresTablesOfAnEarlierLatchkeyAreNamedOrUpgraded() throws Exception {
    PostgresTestServer server = SERVERS.postgres();
    String url = server.jdbcUrl() + "&latchkey.tablePrefix=earlier_";
    try (Connection admin = DriverManager.getConnection(server.jdbcUrl())) {
      connect(url + "&latchkey.createSchema=true").close();
      execute(
          admin,
          "ALTER TABLE earlier_resources DROP COLUMN sole_holder_key, DROP COLUMN sole_holder_id,"
              + " DROP COLUMN sole_client_id, DROP COLUMN sole_mode, DROP COLUMN sole_expires_at,"
              + " DROP COLUMN sole_token");

      assertThatThrownBy(() -> connect(url).close())
          .isInstanceOf(BackendUnavailableException.class)
          .hasMessageContaining("io/latchkey/jdbc/schema/postgresql.sql")
          .hasMessageContaining("earlier latchkey")
          .hasMessageContaining("sole_holder_key");

      try (Latchkey client = connect(url + "&latchkey.createSchema=true")) {
        Lease lease = client.lock("upgraded").acquire(Duration.ZERO);
        lease.release();
        assertThat(client.lock("upgraded").acquire(Duration.ZERO).fencingToken())
            .isGreaterThan(lease.fencingToken());
      }
    }
  }

  /**
   * Without the tables, opening fails and names the file to run (with the prefix to put in it); a
   * table dropped under a running client makes its operations say the same, unless the client was
   * opened with {@code createSchema=true}: that one makes it again.
   */
  private static void assertMissingTablesNameTheFile(
      SqlTestServer server, UnaryOperator<String> driverUrl, String file, String dropOptions)
      throws Exception {
    String resource = "io/latchkey/jdbc/schema/" + file;
    String serverUrl = driverUrl.apply(server.jdbcUrl());
    assertThatThrownBy(() -> connect(serverUrl + "&latchkey.tablePrefix=absent_").close())
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining(resource)
        .hasMessageContaining("'absent_'")
        .hasMessageContaining("createSchema=true");

    String url = serverUrl + "&latchkey.tablePrefix=dropped_";
    try (Latchkey creating = connect(url + "&latchkey.createSchema=true");
        Latchkey client = connect(url);
        Connection admin = DriverManager.getConnection(server.jdbcUrl())) {
      client.lock("before").acquire(Duration.ZERO).release();
      execute(admin, "DROP TABLE dropped_holders" + dropOptions);
      assertThatThrownBy(() -> client.lock("after").acquire(Duration.ZERO))
          .isInstanceOf(BackendUnavailableException.class)
          .hasMessageContaining(resource)
          .hasMessageContaining("dropped_holders");
      creating.lock("after").acquire(Duration.ZERO).release();
      client.lock("after").acquire(Duration.ZERO).release();
    }
  }
}
