package io.latchkey.jdbc;

import static io.latchkey.jdbc.FaultClients.assertConnectionBoundLossAcross;
import static io.latchkey.jdbc.FaultClients.connect;
import static io.latchkey.jdbc.FaultClients.lossOf;
import static io.latchkey.jdbc.FaultClients.unavailableWithinBound;
import static io.latchkey.jdbc.FaultClients.uniqueName;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.BackendUnavailableException;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.jdbc.FaultClients.Closer;
import io.latchkey.jdbc.FaultClients.WatchedLease;
import io.latchkey.servers.FreezableTcpProxy;
import io.latchkey.servers.SqlTestServer;
import io.latchkey.testkit.LostHandOverReply;
import io.latchkey.testkit.WatchdogTally;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Faults under holders, on real PostgreSQL and MariaDB servers that the test starts (issue 9): the
 * database restarted (table mode keeps its locks, advisory and row modes report them lost), the
 * holder's connections killed by an operator (table mode loses nothing: the pool opens new ones),
 * and a network that goes silent between a holder and the database ({@link FreezableTcpProxy}: its
 * operations time out within the bound, its lease runs out and it says so before a waiter gets the
 * lock with a larger fencing token), and a hand-over whose reply the network loses (PostgreSQL
 * table mode: no hold is orphaned). MariaDB's restarts and killed connections also through MySQL's
 * own driver ({@code jdbc:mysql:}, {@link MariaDbDriver}).
 */
class JdbcFaultTest {
  /** Outlasts a restart of either server by far, so that a holder keeps its lease through it. */
  private static final Duration RESTART_LEASE = Duration.ofSeconds(15);

  @RegisterExtension static final SqlServers SERVERS = new SqlServers();

  /** The latchkey URI in table mode of a server's JDBC URL (for the driver under test). */
  private static String tableMode(String serverUrl) {
    return serverUrl + "&latchkey.createSchema=true";
  }

  private static String advisoryMode(String serverUrl) {
    return tableMode(serverUrl) + "&latchkey.mode=advisory&latchkey.tablePrefix=advisory_";
  }

  private static String rowMode(String serverUrl) {
    return tableMode(serverUrl) + "&latchkey.mode=row&latchkey.tablePrefix=row_";
  }

  @Test
  void postgresRestartKeepsTableModeLocks() throws Exception {
    assertRestartKeepsLocks(SERVERS.postgres(), SERVERS.postgres().jdbcUrl());
  }

  @ParameterizedTest
  @EnumSource(MariaDbDriver.class)
  void mariaDbRestartKeepsTableModeLocks(MariaDbDriver driver) throws Exception {
    assertRestartKeepsLocks(SERVERS.mariaDb(), driver.url(SERVERS.mariaDb().jdbcUrl()));
  }

  /**
   * The holder rows are committed, so they survive a restart: while the database is down,
   * operations fail within the bound and the holder keeps its lease (its last renewal is good for
   * longer than the outage); once it is up, the holder's next renewal works on a new connection,
   * nobody else gets the lock, and the holder's release frees it.
   */
  private static void assertRestartKeepsLocks(SqlTestServer server, String serverUrl)
      throws Exception {
    String name = uniqueName("restart-table");
    WatchdogTally renewals = new WatchdogTally();
    try (Closer closer = new Closer()) {
      Latchkey holder = closer.add(connect(tableMode(serverUrl), RESTART_LEASE, renewals));
      Latchkey other = closer.add(connect(tableMode(serverUrl)));
      WatchedLease held = new WatchedLease(holder, renewals, name);

      server.stop();
      unavailableWithinBound(() -> other.lock(name).acquire(Duration.ZERO));
      unavailableWithinBound(() -> holder.lock(name + "/more").acquire(Duration.ZERO));
      held.outlivesAFailedRenewal();
      server.restart();

      held.isRenewedAgain();
      held.passesOnTo(other);
    }
  }

  @Test
  void postgresRestartLosesAdvisoryLocks() throws Exception {
    assertRestartLosesLocks(SERVERS.postgres(), advisoryMode(SERVERS.postgres().jdbcUrl()));
  }

  @ParameterizedTest
  @EnumSource(MariaDbDriver.class)
  void mariaDbRestartLosesAdvisoryLocks(MariaDbDriver driver) throws Exception {
    assertRestartLosesLocks(
        SERVERS.mariaDb(), advisoryMode(driver.url(SERVERS.mariaDb().jdbcUrl())));
  }

  @Test
  void postgresRestartLosesRowLocks() throws Exception {
    assertRestartLosesLocks(SERVERS.postgres(), rowMode(SERVERS.postgres().jdbcUrl()));
  }

  @Test
  void mariaDbRestartLosesRowLocks() throws Exception {
    assertRestartLosesLocks(SERVERS.mariaDb(), rowMode(SERVERS.mariaDb().jdbcUrl()));
  }

  /**
   * An advisory lock lives as long as its connection, a row lock as long as its transaction: a
   * restart ends both, and the client reports the loss (it never finds its lock again on a new
   * connection); after the restart another client gets the lock with a larger token.
   */
  private static void assertRestartLosesLocks(SqlTestServer server, String uri) throws Exception {
    assertConnectionBoundLossAcross(
        uri, RESTART_LEASE, uniqueName("restart-connection-bound"), server::restart);
  }

  @Test
  void postgresKilledConnectionsLoseNothingInTableMode() throws Exception {
    assertKilledConnectionsLoseNothing(
        SERVERS.postgres(),
        SERVERS.postgres().jdbcUrl(),
        killer -> SqlServers.endPostgresSessions(killer, "application_name = 'latchkey'"));
  }

  @ParameterizedTest
  @EnumSource(MariaDbDriver.class)
  void mariaDbKilledConnectionsLoseNothingInTableMode(MariaDbDriver driver) throws Exception {
    assertKilledConnectionsLoseNothing(
        SERVERS.mariaDb(),
        driver.url(SERVERS.mariaDb().jdbcUrl()),
        killer ->
            assertThat(SqlServers.endMariaDbSessions(killer))
                .as("the holder's connections")
                .isPositive());
  }

  /**
   * In table mode a hold is a row, not a connection: an operator who kills every connection of the
   * holder takes nothing from it. The next renewal finds its connection dead, the pool drops it and
   * the one after opens a new one; the lease is never reported lost and the release works.
   */
  private static void assertKilledConnectionsLoseNothing(
      SqlTestServer server, String serverUrl, SqlServers.Killer killer) throws Exception {
    String name = uniqueName("killed-table");
    WatchdogTally renewals = new WatchdogTally();
    try (Latchkey holder = connect(tableMode(serverUrl), Duration.ofSeconds(3), renewals)) {
      WatchedLease held = new WatchedLease(holder, renewals, name);
      renewals.awaitNextRenewal();

      try (Connection connection = DriverManager.getConnection(server.jdbcUrl())) {
        killer.kill(connection);
      }

      // A renewal that ran on a new connection: the one after the failure, or the first one if the
      // killed connections were not idle ones.
      renewals.awaitNextRenewal();
      held.isRenewedAgain();
      try (Latchkey other = connect(tableMode(serverUrl))) {
        held.passesOnTo(other);
      }
    }
  }

  @Test
  void postgresFrozenHolderLosesItsLeaseToAWaiter() throws Exception {
    assertFrozenHolderLosesItsLease(SERVERS.postgres());
  }

  @Test
  void mariaDbFrozenHolderLosesItsLeaseToAWaiter() throws Exception {
    assertFrozenHolderLosesItsLease(SERVERS.mariaDb());
  }

  /**
   * A holder whose network to the database goes silent: its operations fail within the bound; its
   * lease runs out (nothing renews it), and its client says so no later than the database frees the
   * row, so when a waiter is granted the lock, with a larger fencing token, the old holder already
   * knows that it lost it. Once the network is back, its release says the lease was lost.
   */
  private static void assertFrozenHolderLosesItsLease(SqlTestServer server) throws Exception {
    String name = uniqueName("frozen");
    WatchdogTally renewals = new WatchdogTally();
    try (Closer closer = new Closer()) {
      FreezableTcpProxy proxy = closer.add(FreezableTcpProxy.start("127.0.0.1", server.port()));
      Latchkey waiter = closer.add(connect(tableMode(server.jdbcUrl())));
      Latchkey holder =
          closer.add(
              connect(
                  FaultClients.throughProxy(server, proxy) + "&latchkey.createSchema=true",
                  Duration.ofSeconds(2),
                  renewals));
      Lease lease = holder.lock(name).acquire(Duration.ZERO);
      CompletableFuture<LeaseLostException> lost = lossOf(lease);
      renewals.awaitNextRenewal();

      proxy.freeze();
      // The engine's bound or the driver's network timeout, whichever comes first.
      unavailableWithinBound(() -> holder.lock(name + "/other").acquire(Duration.ZERO));

      Lease next = waiter.lock(name).acquire(Duration.ofSeconds(20));
      assertThat(lease.isValid())
          .as("the frozen holder knows its lease ended before the waiter gets the lock")
          .isFalse();
      assertThat(lost.get(30, TimeUnit.SECONDS)).as("the loss is reported").isNotNull();
      assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());

      proxy.unfreeze();
      assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
      assertThat(waiter.admin().inspect(name).orElseThrow().holders())
          .singleElement()
          .satisfies(info -> assertThat(info.fencingToken()).isEqualTo(next.fencingToken()));
      next.release();
    }
  }

  /**
   * {@link LostHandOverReply}: a hand-over (in table mode, in the release's own transaction) whose
   * reply the proxy holds past the operation timeout orphans no hold.
   */
  @Test
  void postgresHandOverWhoseReplyIsLostOrphansNoHold() throws Exception {
    SqlTestServer server = SERVERS.postgres();
    try (Closer closer = new Closer()) {
      FreezableTcpProxy proxy = closer.add(FreezableTcpProxy.start("127.0.0.1", server.port()));
      Latchkey client =
          closer.add(
              Latchkey.connect(
                  FaultClients.throughProxy(server, proxy) + "&latchkey.createSchema=true",
                  LostHandOverReply.waiterOptions(
                          LatchkeyOptions.builder()
                              .leaseTime(Duration.ofSeconds(3))
                              .operationTimeout(FaultClients.OPERATION_TIMEOUT)
                              .closeOnShutdown(false))
                      .build()));
      LostHandOverReply.check(
          client,
          proxy,
          closer.add(connect(tableMode(server.jdbcUrl()))),
          uniqueName("hand-over"),
          BackendUnavailableException.class);
    }
  }
}
