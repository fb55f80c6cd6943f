package io.latchkey.jdbc;

import static io.latchkey.jdbc.FaultClients.assertConnectionBoundLossAcross;
import static io.latchkey.jdbc.FaultClients.connect;
import static io.latchkey.jdbc.FaultClients.failsWithinBound;
import static io.latchkey.jdbc.FaultClients.lossOf;
import static io.latchkey.jdbc.FaultClients.uniqueName;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.latchkey.BackendUnavailableException;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.jdbc.FaultClients.Closer;
import io.latchkey.servers.SqlTestServer;
import io.latchkey.testkit.WatchdogTally;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * PostgreSQL and MariaDB restarted empty under holders (issue 9): the server comes back on the same
 * port with a new data directory, as a wiped container or a replica promoted without latchkey's
 * tables would. Every holder row, queue row and fencing counter is gone. What must hold all the
 * same:
 *
 * <ul>
 *   <li>a client opened with {@code createSchema=true} makes the tables again at its next
 *       operation, and its watchdog's next renewal finds its lease gone and says so (not its lease
 *       timer, after the whole lease; not never);
 *   <li>a client opened without it gets, from each operation, an error that names the SQL file to
 *       run, within the operation timeout;
 *   <li>another client is granted the same names with fencing tokens larger than every token handed
 *       out before the wipe (the counters restart from nothing: the database clock's floor in
 *       {@code ResourceRow.nextToken} is what keeps tokens growing);
 *   <li>the old holder's release of an explicit lease says that it was lost, and leaves the new
 *       holder's grant alone.
 * </ul>
 *
 * <p>The servers are this class's own: the tests wipe them.
 */
class EmptyRestartTest {
  /**
   * Long enough that the lease timer cannot be what reports the loss: the watchdog's renewal (every
   * sixth of it) after the restart finds the lease gone long before the lease runs out.
   */
  private static final Duration WATCHDOG_LEASE = Duration.ofSeconds(20);

  /** A watchdog lease that runs out soon after the renewals start failing. */
  private static final Duration SHORT_LEASE = Duration.ofSeconds(3);

  /** An explicit lease that outlasts the test: only its release can tell it was lost. */
  private static final Duration EXPLICIT_LEASE = Duration.ofMinutes(2);

  @RegisterExtension static final SqlServers SERVERS = new SqlServers();

  private static String createSchema(String uri) {
    return uri + "&latchkey.createSchema=true";
  }

  @ParameterizedTest
  @EnumSource(
      value = SqlDialect.class,
      names = {"POSTGRESQL", "MARIADB"})
  void tableModeMakesItsTablesAgainAndReportsTheLostLeases(SqlDialect dialect) throws Exception {
    SqlTestServer server = SERVERS.server(dialect);
    String watched = uniqueName("empty-watchdog");
    String explicit = uniqueName("empty-explicit");
    WatchdogTally renewals = new WatchdogTally();
    try (Closer closer = new Closer()) {
      Latchkey holder =
          closer.add(connect(createSchema(server.jdbcUrl()), WATCHDOG_LEASE, renewals));
      Lease watchdogLease = holder.lock(watched).acquire(Duration.ZERO);
      Lease explicitLease = holder.lock(explicit).acquire(Duration.ZERO, EXPLICIT_LEASE);
      CompletableFuture<LeaseLostException> lost = lossOf(watchdogLease);
      long highestBefore = Math.max(watchdogLease.fencingToken(), explicitLease.fencingToken());

      server.restartEmpty();

      // Nobody else touches the new server: the holder's own client makes the tables again, and
      // its next renewal finds the lease gone.
      assertThat(lost.get(30, TimeUnit.SECONDS))
          .as("the loss is found by a renewal, not by the lease timer")
          .hasMessageContaining("no longer knows it");
      assertThat(watchdogLease.isValid()).isFalse();
      assertThatThrownBy(watchdogLease::release).isInstanceOf(LeaseLostException.class);

      // A client that does not create tables opens: they are there again.
      Latchkey other = closer.add(connect(server.jdbcUrl()));
      assertAfterTheWipe(holder, other, watched, explicit, explicitLease, highestBefore);
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = SqlDialect.class,
      names = {"POSTGRESQL", "MARIADB"})
  void withoutCreateSchemaEveryOperationNamesTheFileToRun(SqlDialect dialect) throws Exception {
    SqlTestServer server = SERVERS.server(dialect);
    String watched = uniqueName("empty-watchdog");
    String explicit = uniqueName("empty-explicit");
    WatchdogTally renewals = new WatchdogTally();
    try (Closer closer = new Closer()) {
      connect(createSchema(server.jdbcUrl())).close();
      Latchkey holder = closer.add(connect(server.jdbcUrl(), SHORT_LEASE, renewals));
      Lease watchdogLease = holder.lock(watched).acquire(Duration.ZERO);
      Lease explicitLease = holder.lock(explicit).acquire(Duration.ZERO, EXPLICIT_LEASE);
      CompletableFuture<LeaseLostException> lost = lossOf(watchdogLease);
      long highestBefore = Math.max(watchdogLease.fencingToken(), explicitLease.fencingToken());

      server.restartEmpty();

      assertThat(
              failsWithinBound(
                  FaultClients.OPERATION_TIMEOUT,
                  BackendUnavailableException.class,
                  () -> holder.lock(uniqueName("empty-other")).acquire(Duration.ZERO)))
          .hasMessageContaining(dialect.schemaResource());
      // Its renewals fail like that too, until its lease runs out: lost, and said so.
      assertThat(lost.get(30, TimeUnit.SECONDS)).isNotNull();
      assertThat(watchdogLease.isValid()).isFalse();

      // What the message says to do: here, a client opened with createSchema=true.
      Latchkey other = closer.add(connect(createSchema(server.jdbcUrl())));
      assertAfterTheWipe(holder, other, watched, explicit, explicitLease, highestBefore);
    }
  }

  /**
   * After the wipe, once the tables are there again: {@code other} gets both names with tokens
   * larger than every token before the wipe; the old explicit lease's release leaves the new grant
   * alone and says that it was lost; and the first client goes on.
   */
  private static void assertAfterTheWipe(
      Latchkey holder,
      Latchkey other,
      String watched,
      String explicit,
      Lease explicitLease,
      long highestBefore)
      throws Exception {
    Lease nextWatched = other.lock(watched).acquire(Duration.ZERO);
    Lease nextExplicit = other.lock(explicit).acquire(Duration.ZERO);
    assertThat(nextWatched.fencingToken())
        .as("a token after the wipe is larger than every token before it")
        .isGreaterThan(highestBefore);
    assertThat(nextExplicit.fencingToken()).isGreaterThan(highestBefore);

    Throwable oldRelease = catchThrowable(explicitLease::release);
    assertThat(other.admin().inspect(explicit))
        .as("the old holder's release left the new grant alone")
        .hasValueSatisfying(
            lock ->
                assertThat(lock.holders())
                    .singleElement()
                    .satisfies(
                        info ->
                            assertThat(info.fencingToken())
                                .isEqualTo(nextExplicit.fencingToken())));
    assertThat(oldRelease)
        .as("the explicit lease learns of its loss when it is released")
        .isInstanceOf(LeaseLostException.class);
    nextExplicit.release();
    nextWatched.release();
    // The first client goes on.
    holder.lock(watched).acquire(Duration.ofSeconds(5)).release();
  }

  /**
   * The connection-bound modes: the restart ends the pinned connection (advisory mode) or the
   * hold's own connection and its open transaction (row mode), so the holder hears its loss at
   * once; once another client opening with {@code createSchema=true} made the tables again, the
   * same name is granted with a larger token, and the first client goes on.
   */
  @ParameterizedTest
  @CsvSource({"POSTGRESQL, advisory", "MARIADB, advisory", "POSTGRESQL, row", "MARIADB, row"})
  void connectionBoundModesReportTheLossAndGrantLargerTokensAfterIt(SqlDialect dialect, String mode)
      throws Exception {
    SqlTestServer server = SERVERS.server(dialect);
    String name = uniqueName("empty-" + mode);
    assertConnectionBoundLossAcross(
        createSchema(
            server.jdbcUrl() + "&latchkey.mode=" + mode + "&latchkey.tablePrefix=" + mode + "_"),
        WATCHDOG_LEASE,
        name,
        server::restartEmpty);
  }
}
