package io.latchkey.jdbc;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.latchkey.Latchkey;
import io.latchkey.servers.MariaDbTestServer;
import io.latchkey.servers.PostgresTestServer;
import io.latchkey.servers.SqlTestServer;
import io.latchkey.testkit.faults.FaultKind;
import io.latchkey.testkit.faults.FaultMode;
import io.latchkey.testkit.faults.FaultSuite;
import io.latchkey.testkit.faults.ServerControl;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.function.Supplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fault suite on PostgreSQL and MariaDB, in table mode (every mode) and in the connection-bound
 * advisory and row modes (the watchdog and fair locks: they have no explicit lease and no leased
 * semaphore), and on H2 in table mode, with every fault kind: worker pauses, kills, frozen and cut
 * connections, the server crashed (SIGKILL, restarted on its data) and paused (every server process
 * SIGSTOPped). {@link FaultSuite} lists the properties (duration per mode, default 2 minutes; seed;
 * modes; kinds). Reports go to {@code target/fault-reports/DATABASE[-MODE]-FAULTMODE.txt}. Run with
 * {@code mvn -B -pl latchkey-jdbc verify -Psoak -Dtest=SqlFaultSuiteTest
 * -Dsurefire.failIfNoSpecifiedTests=false} (add e.g. {@code -Dtest='SqlFaultSuiteTest#postgres*'}
 * to run one database).
 *
 * <p>Table mode promises the liveness bound (a dead holder's row runs out with its lease). The
 * connection-bound modes free a dead holder's lock when the database ends its connection, and a
 * fair lock waits out a dead waiter's queue place; the bound is reported, not asserted.
 */
@Tag("slow")
class SqlFaultSuiteTest {

  @ParameterizedTest
  @EnumSource(FaultMode.class)
  void postgresTableMode(FaultMode mode) throws Exception {
    run(PostgresTestServer::start, "postgres", mode, "", true);
  }

  @ParameterizedTest
  @EnumSource(
      value = FaultMode.class,
      names = {"WATCHDOG_LOCK", "FAIR_LOCK"})
  void postgresAdvisoryMode(FaultMode mode) throws Exception {
    run(PostgresTestServer::start, "postgres-advisory", mode, "&latchkey.mode=advisory", false);
  }

  @ParameterizedTest
  @EnumSource(
      value = FaultMode.class,
      names = {"WATCHDOG_LOCK", "FAIR_LOCK"})
  void postgresRowMode(FaultMode mode) throws Exception {
    run(PostgresTestServer::start, "postgres-row", mode, "&latchkey.mode=row", false);
  }

  @ParameterizedTest
  @EnumSource(FaultMode.class)
  void mariaDbTableMode(FaultMode mode) throws Exception {
    run(MariaDbTestServer::start, "mariadb", mode, "", true);
  }

  @ParameterizedTest
  @EnumSource(
      value = FaultMode.class,
      names = {"WATCHDOG_LOCK", "FAIR_LOCK"})
  void mariaDbAdvisoryMode(FaultMode mode) throws Exception {
    run(MariaDbTestServer::start, "mariadb-advisory", mode, "&latchkey.mode=advisory", false);
  }

  @ParameterizedTest
  @EnumSource(
      value = FaultMode.class,
      names = {"WATCHDOG_LOCK", "FAIR_LOCK"})
  void mariaDbRowMode(FaultMode mode) throws Exception {
    run(MariaDbTestServer::start, "mariadb-row", mode, "&latchkey.mode=row", false);
  }

  /**
   * H2's TCP server in a JVM of its own ({@link H2ProcessServer}), on a file database with H2's
   * default settings: a crash is a SIGKILL, which loses the commits of H2's last write delay (500
   * ms by default), as the PostgreSQL test server's crash loses its last commits.
   */
  @ParameterizedTest
  @EnumSource(FaultMode.class)
  void h2TableMode(FaultMode mode) throws Exception {
    run(() -> H2ProcessServer.start("faults"), "h2", mode, "", true);
  }

  private static void run(
      Supplier<SqlTestServer> start,
      String report,
      FaultMode mode,
      String options,
      boolean liveness)
      throws Exception {
    assumeTrue(FaultSuite.selected(mode), mode + " is not in -D" + FaultSuite.MODES);
    try (SqlTestServer server = start.get()) {
      // H2 takes its URL's settings after ';', the others their parameters after '?' and '&'.
      String next = server.jdbcUrl().contains("?") ? "&" : ";";
      // The tables are made once here: workers that all create them at once would race.
      Latchkey.connect(server.jdbcUrl() + options + next + "latchkey.createSchema=true").close();
      FaultSuite.runAndCheck(
          mode,
          new Control(server, options),
          report + "-" + mode.name().toLowerCase(Locale.ROOT),
          liveness);
    }
  }

  /**
   * Crashes (SIGKILL), restarts and pauses (SIGSTOP) a database test server, which keeps its port
   * and URL across restarts.
   *
   * @param server the server, on {@code 127.0.0.1}
   * @param options the latchkey options appended to every client's URL
   */
  private record Control(SqlTestServer server, String options) implements ServerControl {
    @Override
    public String host() {
      return "127.0.0.1";
    }

    @Override
    public int port() {
      return server.port();
    }

    @Override
    public String uriVia(String host, int port) {
      return server.jdbcUrl().replace("127.0.0.1:" + server.port(), host + ":" + port) + options;
    }

    @Override
    public Set<FaultKind> serverFaults() {
      return EnumSet.of(FaultKind.CRASH_SERVER, FaultKind.PAUSE_SERVER);
    }

    @Override
    public void crash() {
      server.kill();
    }

    @Override
    public void restart() {
      server.restart();
    }

    @Override
    public void pause(Duration duration) {
      server.pause(duration);
    }
  }
}
