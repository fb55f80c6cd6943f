package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.servers.SqlTestServer;
import io.latchkey.spi.ResourceType;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Row mode on real servers, beyond the kit: when the database ends the connection whose transaction
 * holds one lock's row (an operator's {@code pg_terminate_backend} or {@code KILL CONNECTION}), the
 * client reports that lock lost at once and keeps the others, and the waiter gets the lock; a
 * client that holds as many locks as it has hold connections is refused one more at once; on
 * MariaDB the hold locks its row only.
 */
class RowModeTest {
  @RegisterExtension static final SqlServers SERVERS = new SqlServers();

  @Test
  void postgresTerminatedHoldLosesThatLockToTheWaiter() throws Exception {
    assertLossReported(
        SERVERS.postgres(),
        (admin, session) -> {
          try (PreparedStatement end =
              admin.prepareStatement("SELECT pg_terminate_backend(?::integer, 5000)")) {
            end.setLong(1, session);
            end.executeQuery().close();
          }
        });
  }

  @Test
  void mariaDbKilledHoldLosesThatLockToTheWaiter() throws Exception {
    assertLossReported(
        SERVERS.mariaDb(),
        (admin, session) -> {
          try (Statement kill = admin.createStatement()) {
            kill.execute("KILL CONNECTION " + session);
          }
        });
  }

  @Test
  void oneLockMoreThanTheHoldConnectionsIsRefusedAtOnce() throws Exception {
    String uri = uri(SERVERS.postgres()) + "&latchkey.holdConnections=2";
    try (Latchkey client = Latchkey.connect(uri)) {
      Lease first = client.lock("bound/1").acquire(Duration.ZERO);
      // A re-entry and the other side of a held lock ride on its hold.
      Lease again = client.lock("bound/1").acquire(Duration.ZERO);
      Lease second = client.readWriteLock("bound/2").readLock().acquire(Duration.ZERO);
      // Waiting would never end if nothing is released: refused, not waited for.
      assertThatThrownBy(() -> client.lock("bound/3").acquire(Duration.ofSeconds(30)))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("holdConnections = 2");
      again.release();
      first.release();
      client.lock("bound/3").acquire(Duration.ZERO).release();
      second.release();
    }
  }

  @Test
  void mariaDbHoldLocksItsRowOnly() throws Exception {
    SqlTestServer server = SERVERS.mariaDb();
    try (Latchkey client = Latchkey.connect(uri(server));
        Connection admin = DriverManager.getConnection(server.jdbcUrl())) {
      Lease lease = client.lock("only/the/row").acquire(Duration.ZERO);
      long session = Long.parseLong(holdColumn(admin, "session_id", "only/the/row", lease));
      String holdId = holdColumn(admin, "hold_id", "only/the/row", lease);

      // The statement that locks goes by the primary key, to one row. (Explained without FOR
      // UPDATE: MariaDB reads a const row while it plans, and would wait for the hold's lock.)
      try (PreparedStatement explain =
          admin.prepareStatement(
              "EXPLAIN SELECT token FROM latchkey_row_locks WHERE res_key = ? AND hold_id = ?")) {
        explain.setString(1, ResourceKeys.resource(ResourceType.LOCK, "only/the/row"));
        explain.setString(2, holdId);
        try (ResultSet rs = explain.executeQuery()) {
          rs.next();
          assertThat(rs.getString("key")).isEqualTo("PRIMARY");
          assertThat(rs.getString("type")).isEqualTo("const");
        }
      }
      // InnoDB's own view: the hold's transaction locks one row.
      try (PreparedStatement trx =
          admin.prepareStatement(
              "SELECT trx_rows_locked FROM information_schema.INNODB_TRX"
                  + " WHERE trx_mysql_thread_id = ?")) {
        trx.setLong(1, session);
        try (ResultSet rs = trx.executeQuery()) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getLong(1)).isEqualTo(1);
        }
      }
      // A neighbouring row of the same table can be locked meanwhile; the hold's row cannot.
      try (Statement statement = admin.createStatement()) {
        statement.executeUpdate(
            "INSERT INTO latchkey_row_locks (res_key, hold_id, token, client_id, session_id)"
                + " VALUES (REPEAT('0', 64), REPEAT('0', 32), 1, 'test', 0)");
        admin.setAutoCommit(false);
        try (ResultSet rs =
            statement.executeQuery(
                "SELECT token FROM latchkey_row_locks WHERE res_key = REPEAT('0', 64)"
                    + " AND hold_id = REPEAT('0', 32) FOR UPDATE NOWAIT")) {
          assertThat(rs.next()).isTrue();
        }
        try (PreparedStatement held =
            admin.prepareStatement(
                "SELECT token FROM latchkey_row_locks WHERE hold_id = ? FOR UPDATE NOWAIT")) {
          held.setString(1, holdId);
          assertThatThrownBy(held::executeQuery).isInstanceOf(SQLException.class);
        }
        admin.rollback();
        admin.setAutoCommit(true);
        statement.executeUpdate("DELETE FROM latchkey_row_locks WHERE res_key = REPEAT('0', 64)");
      }
      lease.release();
    }
  }

  /** Ends one database session, as an operator would. */
  @FunctionalInterface
  private interface SessionKiller {
    void kill(Connection admin, long session) throws SQLException;
  }

  private static void assertLossReported(SqlTestServer server, SessionKiller killer)
      throws Exception {
    String uri = uri(server);
    try (Latchkey holder = Latchkey.connect(uri);
        Latchkey waiter = Latchkey.connect(uri);
        Connection admin = DriverManager.getConnection(server.jdbcUrl())) {
      Lease first = holder.lock("loss/first").acquire(Duration.ZERO);
      Lease second = holder.mutex("loss/second").acquire(Duration.ZERO);
      CompletableFuture<LeaseLostException> firstLost = new CompletableFuture<>();
      first.onLost(firstLost::complete);
      CompletableFuture<Lease> next =
          waiter.lock("loss/first").acquireAsync(Duration.ofSeconds(60)).toCompletableFuture();

      killer.kill(admin, Long.parseLong(holdColumn(admin, "session_id", "loss/first", first)));

      // Not the watchdog's lease: the liveness check finds the connection gone within a second.
      assertThat(firstLost.get(30, TimeUnit.SECONDS)).isNotNull();
      assertThat(first.isValid()).isFalse();
      Lease taken = next.get(30, TimeUnit.SECONDS);
      assertThat(taken.fencingToken()).isGreaterThan(first.fencingToken());
      assertThatThrownBy(first::release).isInstanceOf(LeaseLostException.class);
      // The other lock lives on a connection of its own.
      assertThat(second.isValid()).isTrue();
      second.release();
      taken.release();
      // The client goes on: a new hold on a new connection.
      holder.lock("loss/first").acquire(Duration.ZERO).release();
    }
  }

  private static String uri(SqlTestServer server) {
    return server.jdbcUrl() + "&latchkey.mode=row&latchkey.createSchema=true";
  }

  /** A column of the row that the hold of a lease locks. */
  private static String holdColumn(Connection admin, String column, String name, Lease lease)
      throws SQLException {
    try (PreparedStatement select =
        admin.prepareStatement(
            "SELECT " + column + " FROM latchkey_row_locks WHERE res_key = ? AND token = ?")) {
      select.setString(1, ResourceKeys.resource(ResourceType.LOCK, name));
      select.setLong(2, lease.fencingToken());
      try (ResultSet rs = select.executeQuery()) {
        assertThat(rs.next()).as("the row of the hold of '%s'", name).isTrue();
        return rs.getString(1);
      }
    }
  }
}
