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
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fault suite on PostgreSQL and MariaDB, in table mode (every mode) and in the connection-bound
 * advisory and row modes (the watchdog and fair locks: they have no explicit lease and no leased
 * semaphore), and on H2 in table mode, with every fault kind: worker pauses, kills, frozen and cut
 * connections, the server crashed (SIGKILL, restarted on its data; H2: its TCP server stopped and
 * its database closed, then reopened from its file) and paused (every server process SIGSTOPped;
 * not H2, which runs in the test JVM). {@link FaultSuite} lists the properties (duration per mode,
 * default 2 minutes; seed; modes; kinds). Reports go to {@code
 * target/fault-reports/DATABASE[-MODE]-FAULTMODE.txt}. Run with {@code mvn -B -pl latchkey-jdbc
 * verify -Psoak -Dtest=SqlFaultSuiteTest -Dsurefire.failIfNoSpecifiedTests=false} (add e.g. {@code
 * -Dtest='SqlFaultSuiteTest#postgres*'} to run one database).
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
   * H2 in this JVM, on a file database: a crash cuts every connection and closes the database, and
   * the restart opens its file again, so every committed row (leases, fencing counters) survives: a
   * clean shut-down, milder than the PostgreSQL test server's crash, which loses its last commits.
   * An in-memory database would come back empty. It cannot be paused: its server threads share this
   * JVM.
   */
  @ParameterizedTest
  @EnumSource(FaultMode.class)
  void h2TableMode(FaultMode mode) throws Exception {
    assumeTrue(FaultSuite.selected(mode), mode + " is not in -D" + FaultSuite.MODES);
    try (H2TestServer server = H2TestServer.startFile("faults")) {
      check(mode, Control.of(server), server.jdbcUrl() + ";", "h2", true);
    }
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
      check(mode, Control.of(server, options), server.jdbcUrl() + options + "&", report, liveness);
    }
  }

  /**
   * @param optionsPrefix the URI up to where one more latchkey option can follow
   */
  private static void check(
      FaultMode mode, ServerControl control, String optionsPrefix, String report, boolean liveness)
      throws Exception {
    // The tables are made once here: workers that all create them at once would race.
    Latchkey.connect(optionsPrefix + "latchkey.createSchema=true").close();
    FaultSuite.runAndCheck(
        mode, control, report + "-" + mode.name().toLowerCase(Locale.ROOT), liveness);
  }

  /**
   * Crashes, restarts and (where {@code serverFaults} has it) pauses a database test server that
   * keeps its port and URL across restarts.
   *
   * @param jdbcUrl the server's URL on {@code 127.0.0.1:port}, without the mode options
   * @param options the latchkey options appended to every client's URL
   */
  private record Control(
      int port,
      String jdbcUrl,
      String options,
      Set<FaultKind> serverFaults,
      Runnable crasher,
      Runnable restarter,
      Consumer<Duration> pauser)
      implements ServerControl {

    static Control of(SqlTestServer server, String options) {
      return new Control(
          server.port(),
          server.jdbcUrl(),
          options,
          EnumSet.of(FaultKind.CRASH_SERVER, FaultKind.PAUSE_SERVER),
          server::kill,
          server::restart,
          server::pause);
    }

    static Control of(H2TestServer server) {
      return new Control(
          server.port(),
          server.jdbcUrl(),
          "",
          EnumSet.of(FaultKind.CRASH_SERVER),
          server::kill,
          server::restart,
          duration -> {
            throw new UnsupportedOperationException("H2 runs in this JVM and cannot be paused");
          });
    }

    @Override
    public String host() {
      return "127.0.0.1";
    }

    @Override
    public String uriVia(String host, int port) {
      return jdbcUrl.replace("127.0.0.1:" + this.port, host + ":" + port) + options;
    }

    @Override
    public void crash() {
      crasher.run();
    }

    @Override
    public void restart() {
      restarter.run();
    }

    @Override
    public void pause(Duration duration) {
      pauser.accept(duration);
    }
  }
}
