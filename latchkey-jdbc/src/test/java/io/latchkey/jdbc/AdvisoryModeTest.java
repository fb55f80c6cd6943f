package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.servers.MariaDbTestServer;
import io.latchkey.servers.PostgresTestServer;
import io.latchkey.servers.SqlTestServer;
import io.latchkey.spi.ResourceType;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Advisory mode on real servers, beyond the kit: when the database ends the connection that holds a
 * client's advisory locks (an operator's {@code pg_terminate_backend} or {@code KILL CONNECTION}),
 * the client reports every lock lost at once, another client gets them at once, and the first
 * client goes on working on a new connection; two names whose PostgreSQL keys collide are never one
 * lock.
 */
class AdvisoryModeTest {
  @RegisterExtension static final SqlServers SERVERS = new SqlServers();

  @Test
  void postgresTerminatedConnectionLosesEveryLock() throws Exception {
    PostgresTestServer server = SERVERS.postgres();
    assertLossReported(
        server,
        killer -> SqlServers.endPostgresSessions(killer, "application_name LIKE 'latchkey:%'"));
  }

  @Test
  void mariaDbKilledConnectionLosesEveryLock() throws Exception {
    MariaDbTestServer server = SERVERS.mariaDb();
    // Every connection of the client: the pinned one is among them.
    assertLossReported(server, SqlServers::endMariaDbSessions);
  }

  @Test
  void postgresNameWhoseKeyAnotherNameClaimedIsRefused() throws Exception {
    PostgresTestServer server = SERVERS.postgres();
    String uri = server.jdbcUrl() + "&latchkey.mode=advisory&latchkey.createSchema=true";
    String name = "collision/" + UUID.randomUUID();
    long key =
        new AdvisoryHolds(SqlDialect.POSTGRESQL, TableSchema.DEFAULT_PREFIX, "test")
            .postgresKey(ResourceKeys.resource(ResourceType.LOCK, name));
    try (Latchkey client = Latchkey.connect(uri)) {
      // A real collision needs about 2^32 names; the claim another name would have made is written
      // by hand.
      try (Connection connection = DriverManager.getConnection(server.jdbcUrl());
          PreparedStatement claim =
              connection.prepareStatement(
                  "INSERT INTO latchkey_advisory_keys (lock_key, res_key, name) VALUES (?, ?, ?)")) {
        claim.setLong(1, key);
        claim.setString(2, ResourceKeys.resource(ResourceType.LOCK, "the first one"));
        claim.setString(3, "the first one");
        claim.executeUpdate();
      }

      assertThatThrownBy(() -> client.lock(name).acquire(Duration.ZERO))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(name)
          .hasMessageContaining("the first one");
      Lease other = client.lock(name + "/other").acquire(Duration.ZERO);
      other.release();
    }
  }

  @Test
  void postgresFirstHoldWhoseWriteFailsGivesItsAdvisoryLockBack() throws Exception {
    PostgresTestServer server = SERVERS.postgres();
    String prefix = "failing_";
    String uri =
        server.jdbcUrl()
            + "&latchkey.mode=advisory&latchkey.createSchema=true&latchkey.tablePrefix="
            + prefix;
    String name = "failing/" + UUID.randomUUID();
    String resourceKey = ResourceKeys.resource(ResourceType.LOCK, name);
    try (Latchkey first = Latchkey.connect(uri);
        Latchkey second = Latchkey.connect(uri);
        Connection admin = DriverManager.getConnection(server.jdbcUrl())) {
      // The name's row exists, and the lock is free: the next acquire takes the one-round-trip
      // path, whose advisory lock is taken in the statement that then fails on writing the sole
      // holder into the resource row.
      first.lock(name).acquire(Duration.ZERO).release();
      try (var statement = admin.createStatement()) {
        statement.execute(
            "CREATE FUNCTION failing_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                + " IF NEW.res_key = '"
                + resourceKey
                + "' AND NEW.sole_holder_key IS NOT NULL THEN"
                + " RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$");
        statement.execute(
            "CREATE TRIGGER failing_write BEFORE UPDATE ON "
                + prefix
                + "resources FOR EACH ROW EXECUTE FUNCTION failing_write()");
      }

      assertThatThrownBy(() -> first.lock(name).acquire(Duration.ZERO))
          .hasMessageContaining("refused by the test");

      try (var statement = admin.createStatement()) {
        statement.execute("DROP TRIGGER failing_write ON " + prefix + "resources");
      }
      // Had the failed acquire kept its advisory lock, the first client's connection would hold
      // the name for as long as it lives, and nobody else could take it.
      Lease taken = second.lock(name).acquire(Duration.ZERO);
      taken.release();
    }
  }

  private static void assertLossReported(SqlTestServer server, SqlServers.Killer killer)
      throws Exception {
    String uri = server.jdbcUrl() + "&latchkey.mode=advisory&latchkey.createSchema=true";
    try (Latchkey holder = Latchkey.connect(uri)) {
      Lease first = holder.lock("loss/first").acquire(Duration.ZERO);
      Lease second = holder.mutex("loss/second").acquire(Duration.ZERO);
      CompletableFuture<LeaseLostException> firstLost = new CompletableFuture<>();
      first.onLost(firstLost::complete);

      try (Connection connection = DriverManager.getConnection(server.jdbcUrl())) {
        killer.kill(connection);
      }

      // Not the watchdog's lease: the liveness check finds the connection gone within a second.
      assertThat(firstLost.get(30, TimeUnit.SECONDS)).isNotNull();
      assertThat(first.isValid()).isFalse();
      // The loss of every grant reaches each lease in turn.
      Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> !second.isValid());
      assertThatThrownBy(first::release).isInstanceOf(LeaseLostException.class);
      assertThatThrownBy(second::release).isInstanceOf(LeaseLostException.class);

      try (Latchkey other = Latchkey.connect(uri)) {
        Lease taken = other.lock("loss/first").acquire(Duration.ZERO);
        assertThat(taken.fencingToken()).isGreaterThan(first.fencingToken());
        taken.release();
      }
      // The client goes on, on a new connection.
      holder.lock("loss/first").acquire(Duration.ZERO).release();
    }
  }
}
