package io.latchkey.jdbc;

import static io.latchkey.jdbc.FaultClients.SLACK;
import static io.latchkey.jdbc.FaultClients.throughProxy;
import static io.latchkey.jdbc.FaultClients.uniqueName;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.BackendTimeoutException;
import io.latchkey.DistributedLock;
import io.latchkey.HolderInfo;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.jdbc.FaultClients.Closer;
import io.latchkey.servers.FreezableTcpProxy;
import io.latchkey.servers.SqlTestServer;
import io.latchkey.spi.ResourceType;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A network to the database that goes silent while a blocking {@code lock()} or {@code unlock()}
 * runs its transaction on the caller's thread ({@link io.latchkey.spi.CallerWaits}: the backend's
 * own pool keeps to the deadline). There the engine's timer has no stage to fail: only the network
 * timeout that {@link Transactions} sets to the time left ends the caller's wait (pgjdbc's own
 * {@code socketTimeout}, which the backend sets to the operation timeout rounded up to seconds, is
 * the same bound a second time on PostgreSQL). A new connection is waited for only until the
 * deadline, whatever timeouts the URL gives the driver. Each test runs on PostgreSQL, on MariaDB
 * through its driver ({@code jdbc:mariadb:}) and on MariaDB through MySQL's own driver
 * (Connector/J, {@code jdbc:mysql:}): every driver that the own pool lets run on the caller's
 * thread ({@link JdbcBackendProvider#keepsDeadline}). H2 over the network keeps the blocking calls
 * off the caller's thread (its driver ignores the network timeout): there the engine's timer ends
 * the wait.
 *
 * <p>To catch the call inside its transaction, the test holds the name's resource row ({@code
 * SELECT ... FOR UPDATE}) on a connection of its own: the caller's statement waits for that row on
 * the server, where the test sees it ({@code pg_stat_activity}, InnoDB's transactions); the
 * caller's thread is then the one reading the driver's socket. The test freezes the proxy and lets
 * the row go: the server finishes what it received, and its answer stays in the proxy. Once the
 * network is back, nothing is corrupted: the lock is held by the caller or free or runs out with
 * its lease, whoever takes it next gets a larger fencing token, and the caller's next calls work on
 * new connections.
 */
class FrozenCallerThreadTest {
  @RegisterExtension static final SqlServers SERVERS = new SqlServers();

  /** Long enough for the test to see the statement wait and freeze the proxy meanwhile. */
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(2);

  private static final Duration LEASE = Duration.ofSeconds(3);

  /** Ends a call that hangs: far beyond the bound, far below the driver's own socket timeout. */
  private static final Duration HANG = Duration.ofSeconds(20);

  /** A driver's read timeout that a URL may set: far beyond the bound. */
  private static final Duration DRIVER_SOCKET_TIMEOUT = Duration.ofMinutes(1);

  /** The frozen client's sessions, as the server lists them (application or user name). */
  private static final String FROZEN_SESSIONS = "latchkey-frozen-caller";

  /** How many sessions of a user wait for a row lock on MariaDB. */
  private static final String MARIADB_WAITING_FOR_A_ROW_LOCK =
      "SELECT count(*) FROM information_schema.INNODB_TRX t"
          + " JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id"
          + " WHERE p.USER = ? AND t.trx_state = 'LOCK WAIT'";

  /** A database behind the proxy, reached through the driver of its URL. */
  enum Database {
    POSTGRESQL(
        "org.postgresql.",
        "SELECT count(*) FROM pg_stat_activity"
            + " WHERE application_name = ? AND wait_event_type = 'Lock'",
        UnaryOperator.identity()) {
      @Override
      SqlTestServer server() {
        return SERVERS.postgres();
      }

      @Override
      String named(String uri) {
        return uri + "&ApplicationName=" + FROZEN_SESSIONS;
      }

      @Override
      String socketTimeout(Duration timeout) {
        return "&socketTimeout=" + timeout.toSeconds();
      }
    },
    MARIADB(MariaDbDriver.MARIADB),
    MARIADB_VIA_JDBC_MYSQL(MariaDbDriver.MYSQL);

    private final String driverPackage;
    private final String waitingForARowLock;

    // A method reference of no state.
    @SuppressWarnings("ImmutableEnumChecker")
    private final UnaryOperator<String> driverUrl;

    Database(MariaDbDriver driver) {
      this(driver.packagePrefix(), MARIADB_WAITING_FOR_A_ROW_LOCK, driver::url);
    }

    Database(String driverPackage, String waitingForARowLock, UnaryOperator<String> driverUrl) {
      this.driverPackage = driverPackage;
      this.waitingForARowLock = waitingForARowLock;
      this.driverUrl = driverUrl;
    }

    SqlTestServer server() {
      return SERVERS.mariaDb();
    }

    /** The latchkey URI of a server's JDBC URL, for this database's driver. */
    String uri(String serverUrl) {
      return driverUrl.apply(serverUrl);
    }

    /** The URI of a client whose sessions the server lists as {@link #FROZEN_SESSIONS}. */
    String named(String uri) {
      // The MariaDB test server takes any user name.
      return uri.replace("user=root", "user=" + FROZEN_SESSIONS);
    }

    /** The URL parameter that sets the driver's own read timeout. */
    String socketTimeout(Duration timeout) {
      return "&socketTimeout=" + timeout.toMillis();
    }
  }

  @ParameterizedTest
  @EnumSource(Database.class)
  void aBlockingLockWhoseNetworkFreezesInItsTransactionTimesOutOnTheCallersThread(Database database)
      throws Exception {
    String name = uniqueName("frozen-caller-lock");
    try (Closer closer = new Closer()) {
      Scene scene = Scene.open(closer, database, name);
      DistributedLock lock = scene.lock();
      Latchkey other = scene.other();
      Caller caller = scene.caller();
      HolderInfo first = caller.call(() -> heldThenUnlocked(lock, other));

      scene.frozenInItsTransaction(lock::lock).endedWithinTheBound();

      scene.proxy().unfreeze();
      // An uncontended acquire is one statement in a transaction of its own, which the server
      // may have committed before the freeze: the grant it made may be there, unknown to the
      // caller, until its lease runs out.
      List<HolderInfo> left = holders(other, name);
      assertThat(left)
          .as("what the lost answer may have left")
          .allSatisfy(
              orphan -> {
                assertThat(orphan.owner()).isEqualTo(first.owner());
                assertThat(orphan.fencingToken()).isGreaterThan(first.fencingToken());
              });
      long before = left.stream().mapToLong(HolderInfo::fencingToken).max().orElse(0);
      // The same owner again, at once: a fresh grant, never the one it does not know.
      HolderInfo again = caller.call(() -> heldThenUnlocked(lock, other));
      assertThat(again.holds()).isEqualTo(1);
      assertThat(again.fencingToken()).isGreaterThan(Math.max(before, first.fencingToken()));
      Lease next = other.lock(name).acquire(Duration.ofSeconds(10));
      assertThat(next.fencingToken()).isGreaterThan(again.fencingToken());
      next.release();
    }
  }

  @ParameterizedTest
  @EnumSource(Database.class)
  void aBlockingUnlockWhoseNetworkFreezesInItsTransactionTimesOutOnTheCallersThread(
      Database database) throws Exception {
    String name = uniqueName("frozen-caller-unlock");
    try (Closer closer = new Closer()) {
      Scene scene = Scene.open(closer, database, name);
      DistributedLock lock = scene.lock();
      Latchkey other = scene.other();
      Caller caller = scene.caller();
      caller.call(() -> heldThenUnlocked(lock, other));
      HolderInfo held =
          caller.call(
              () -> {
                lock.lock();
                return single(holders(other, name));
              });
      // A waiter of another client: the release is not the uncontended one, and whoever gets the
      // lock next is seen.
      CompletableFuture<Lease> waiter =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return other.lock(name).acquire(Duration.ofSeconds(30));
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                  throw new IllegalStateException(e);
                }
              });
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> other.admin().inspect(name).orElseThrow().queuedWaiters() == 1);

      scene.frozenInItsTransaction(lock::unlock).endedWithinTheBound();

      assertThat(caller.call(lock::isHeldByCurrentOwner))
          .as("a release without an answer is forgotten: its lease runs out on the server")
          .isFalse();
      scene.proxy().unfreeze();
      // Released by the call, or not (its transaction rolled back when the server ended the idle
      // session): then the waiter gets the lock once the lease runs out.
      assertThat(waiter).succeedsWithin(LEASE.plus(HANG));
      Lease next = waiter.join();
      assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
      next.release();
      HolderInfo again = caller.call(() -> heldThenUnlocked(lock, other));
      assertThat(again.fencingToken()).isGreaterThan(next.fencingToken());
      assertThat(holders(other, name)).isEmpty();
    }
  }

  /**
   * A URL that gives the driver a read timeout of its own, far beyond the operation timeout: a
   * caller that tries again while the network is still silent opens a new connection (the first
   * call's connection broke, and the pool closed its idle ones), and pgjdbc reads the handshake for
   * as long as that timeout. The pool opens the connection on a thread of its own and waits for it
   * only until the deadline ({@link ConnectionPool}), so the caller's wait ends in time.
   */
  @ParameterizedTest
  @EnumSource(Database.class)
  void aUrlWithALongReadTimeoutOfItsOwnStillBoundsABlockingLockThroughAFrozenNetwork(
      Database database) throws Exception {
    SqlTestServer server = database.server();
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", server.port())) {
      assertTriesThroughAFrozenNetworkEndWithinTheBound(
          proxy,
          database.uri(throughProxy(server, proxy))
              + database.socketTimeout(DRIVER_SOCKET_TIMEOUT)
              + "&latchkey.createSchema=true");
    }
  }

  /** H2's driver ignores a connection's network timeout: its blocking calls stay off the caller. */
  @Test
  void h2OverTheNetworkBoundsABlockingLockThroughAFrozenNetwork() throws Exception {
    try (H2TestServer server = H2TestServer.start("frozen_caller");
        FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", server.port())) {
      assertTriesThroughAFrozenNetworkEndWithinTheBound(
          proxy,
          server.jdbcUrl().replace(":" + server.port() + "/", ":" + proxy.port() + "/")
              + ";latchkey.createSchema=true");
    }
  }

  /**
   * Freezes the proxy under a client of {@code uri} and lets a caller try the lock twice (the
   * second try opens a connection); both end within the bound, and once the network is back the
   * caller gets the lock with a larger token.
   */
  private static void assertTriesThroughAFrozenNetworkEndWithinTheBound(
      FreezableTcpProxy proxy, String uri) throws Exception {
    String name = uniqueName("frozen-caller-open");
    try (Closer closer = new Closer()) {
      Latchkey client = closer.add(client(uri, OPERATION_TIMEOUT));
      Caller caller = closer.add(new Caller());
      DistributedLock lock = client.lock(name);
      HolderInfo first = caller.call(() -> heldThenUnlocked(lock, client));

      proxy.freeze();
      for (int attempt = 1; attempt <= 2; attempt++) {
        Future<Outcome> outcome = caller.start(lock::lock);
        int tried = attempt;
        assertThat(outcome)
            .as(
                () ->
                    "try "
                        + tried
                        + "; the caller's thread: "
                        + Arrays.toString(caller.thread().getStackTrace()))
            .succeedsWithin(HANG);
        outcome.get().endedWithinTheBound();
      }
      proxy.unfreeze();

      // The held bytes of a try reach the server now: its grant may be there, not known to the
      // caller, whose next lock() then gets a fresh grant.
      HolderInfo again = caller.call(() -> heldThenUnlocked(lock, client));
      assertThat(again.fencingToken()).isGreaterThan(first.fencingToken());
    }
  }

  /**
   * One test's cast: the client behind the proxy (the backend's own pool, its sessions named for
   * the test) and its lock, another client straight to the server, and the caller's thread.
   */
  private record Scene(
      Database database,
      String name,
      FreezableTcpProxy proxy,
      DistributedLock lock,
      Latchkey other,
      Caller caller) {
    static Scene open(Closer closer, Database database, String name) throws Exception {
      SqlTestServer server = database.server();
      FreezableTcpProxy proxy = closer.add(FreezableTcpProxy.start("127.0.0.1", server.port()));
      Latchkey frozen =
          closer.add(
              client(
                  database.named(database.uri(throughProxy(server, proxy)))
                      + "&latchkey.createSchema=true",
                  OPERATION_TIMEOUT));
      // Its operations outlast a row lock that the frozen client's session may keep until the
      // server ends it (idle in its transaction for the operation timeout).
      Latchkey other =
          closer.add(
              client(
                  server.jdbcUrl() + "&latchkey.createSchema=true", OPERATION_TIMEOUT.plus(SLACK)));
      return new Scene(database, name, proxy, frozen.lock(name), other, closer.add(new Caller()));
    }

    /**
     * Holds the name's resource row until the caller's {@code call} waits for it on the server,
     * checks that the caller's thread is the one reading the driver's socket, freezes the proxy and
     * lets the row go.
     *
     * @return how the call ended
     */
    Outcome frozenInItsTransaction(Runnable call) throws Exception {
      SqlTestServer server = database.server();
      try (Connection admin = DriverManager.getConnection(server.jdbcUrl());
          Connection watcher = DriverManager.getConnection(server.jdbcUrl());
          PreparedStatement hold =
              admin.prepareStatement(
                  "SELECT 1 FROM "
                      + TableSchema.DEFAULT_PREFIX
                      + "resources WHERE res_key = ? FOR UPDATE")) {
        admin.setAutoCommit(false);
        hold.setString(1, ResourceKeys.resource(ResourceType.LOCK, name));
        try (ResultSet row = hold.executeQuery()) {
          assertThat(row.next()).as("the name's resource row").isTrue();
        }
        Future<Outcome> outcome = caller.start(call);
        await()
            .pollInterval(Duration.ofMillis(10))
            .atMost(OPERATION_TIMEOUT)
            .until(() -> waitingForARowLock(watcher, database));
        assertThat(caller.thread().getStackTrace())
            .as("the caller's thread runs the transaction")
            .anySatisfy(
                frame -> assertThat(frame.getClassName()).startsWith(database.driverPackage))
            .anySatisfy(
                frame -> assertThat(frame.getClassName()).isEqualTo(Transactions.class.getName()));
        proxy.freeze();
        admin.rollback();
        assertThat(outcome)
            .as(() -> "the caller's thread: " + Arrays.toString(caller.thread().getStackTrace()))
            .succeedsWithin(HANG);
        return outcome.get();
      }
    }
  }

  private static boolean waitingForARowLock(Connection watcher, Database database)
      throws SQLException {
    try (PreparedStatement sessions = watcher.prepareStatement(database.waitingForARowLock)) {
      sessions.setString(1, FROZEN_SESSIONS);
      try (ResultSet rows = sessions.executeQuery()) {
        rows.next();
        return rows.getInt(1) > 0;
      }
    }
  }

  /** Takes and gives back the lock; answers how another client saw it while held. */
  private static HolderInfo heldThenUnlocked(DistributedLock lock, Latchkey other) {
    lock.lock();
    try {
      return single(holders(other, lock.name()));
    } finally {
      lock.unlock();
    }
  }

  private static List<HolderInfo> holders(Latchkey client, String name) {
    return client.admin().inspect(name).map(info -> info.holders()).orElse(List.of());
  }

  private static HolderInfo single(List<HolderInfo> holders) {
    assertThat(holders).hasSize(1);
    return holders.get(0);
  }

  private static Latchkey client(String uri, Duration operationTimeout) {
    return Latchkey.connect(
        uri,
        LatchkeyOptions.builder()
            .leaseTime(LEASE)
            .operationTimeout(operationTimeout)
            .recheckInterval(Duration.ofMillis(100))
            .closeOnShutdown(false)
            .build());
  }

  /** How a blocking call on the caller's thread ended. */
  private record Outcome(@Nullable Throwable failure, Duration took, boolean interrupted) {
    void endedWithinTheBound() {
      assertThat(failure).isInstanceOf(BackendTimeoutException.class);
      assertThat(took).as("how long the call took").isLessThan(OPERATION_TIMEOUT.plus(SLACK));
      assertThat(interrupted).as("the caller's thread is left interrupted").isFalse();
    }
  }

  /**
   * The thread of the blocking calls: one for the whole test, so that they are one owner's, and one
   * the test can look at while it waits.
   */
  private static final class Caller implements AutoCloseable {
    private final ExecutorService executor =
        Executors.newSingleThreadExecutor(
            task -> {
              Thread thread = new Thread(task, "frozen-caller");
              thread.setDaemon(true);
              return thread;
            });
    private final Thread thread;

    Caller() throws Exception {
      thread = executor.submit(Thread::currentThread).get(10, TimeUnit.SECONDS);
    }

    Thread thread() {
      return thread;
    }

    <T> T call(Callable<T> call) throws Exception {
      return executor.submit(call).get(HANG.toMillis(), TimeUnit.MILLISECONDS);
    }

    Future<Outcome> start(Runnable call) {
      return executor.submit(
          () -> {
            long start = System.nanoTime();
            Throwable failure = null;
            try {
              call.run();
            } catch (RuntimeException | Error e) {
              failure = e;
            }
            return new Outcome(
                failure,
                Duration.ofNanos(System.nanoTime() - start),
                Thread.currentThread().isInterrupted());
          });
    }

    @Override
    public void close() {
      executor.shutdownNow();
    }
  }
}
