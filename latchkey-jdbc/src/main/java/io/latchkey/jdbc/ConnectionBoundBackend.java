package io.latchkey.jdbc;

import io.latchkey.ClientInfo;
import io.latchkey.Feature;
import io.latchkey.LockInfo;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.spi.AdminStore;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.LatchStore;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.RenewResult;
import io.latchkey.spi.SemaphoreStore;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * The connection-bound modes: advisory mode, whose locks are PostgreSQL advisory locks ({@code
 * pg_try_advisory_lock}, {@code pg_try_advisory_lock_shared}) or MariaDB/MySQL named locks ({@code
 * GET_LOCK(name, 0)}) on one pinned connection per client ({@link AdvisoryHolds}), and row mode,
 * whose locks are rows held {@code FOR UPDATE} by a transaction of their own, one connection per
 * held lock ({@link RowHolds}). The database frees both when their connection ends.
 *
 * <p>How it works. The database's lock is what makes a hold connection-bound; the rows of table
 * mode carry everything it cannot: the owner and its hold counts, the fencing counter (one per
 * name, raised by every new holder), the wait queue and its hand-offs, and what the operator's
 * tools show. Each operation is one transaction (advisory mode: on the pinned connection, {@link
 * PinnedSession}; row mode: on the backend's pool) that locks the name's resource row, drops the
 * holders whose database lock is gone (the {@link HoldKeeper}), applies table mode's rules ({@link
 * TableLockStore}) and, for a new hold, takes the database's lock before it commits; a release
 * gives it back with the holder's last hold. Exclusion is decided by the rows under the resource
 * row's lock, as in table mode; the database's lock decides how long a hold lives: exactly as long
 * as its connection (or, in row mode, its transaction), whatever the lease. So a client that dies,
 * or whose connection an operator kills, frees its locks at once, and a live client keeps its locks
 * however long it pauses; explicit lease times are refused ({@link Feature#LEASE_TIME} is not
 * declared). The watchdog still renews the rows' leases, which only confirms that the grant is
 * there (a renewal never finds a hold gone for want of time; it does find gone a hold whose
 * connection this client has lost).
 *
 * <p>Loss. The liveness check every {@value #CHECK_MILLIS} ms (a round trip on each connection that
 * holds locks, skipped while an operation uses it), and a connection error or the check before each
 * operation on the pinned connection, report what a dead connection held lost at once: in advisory
 * mode every grant of the client, in row mode that connection's one grant. An operator's evict or
 * force-release of another client's holder ends that holder's connection: only the connection that
 * took a database lock can give it back. Never share a table prefix between modes: a holder of
 * another mode has no database lock of this mode, so it would be dropped as dead. Semaphores,
 * leased semaphores and latches are not offered (they are not connection-bound: use table mode),
 * nor owner tokens from other processes (a hold lives on the connection of the client that took
 * it), nor presence.
 */
final class ConnectionBoundBackend extends JdbcModeBackend {
  /** How often the connections that hold locks are checked. */
  static final long CHECK_MILLIS = 500;

  private final ConnectionSource pool;
  private final Binding binding;
  private final TableLockStore locks;
  private final TableRenewal renewal;
  private final AdminStore admin;
  private final ScheduledFuture<?> liveness;

  /**
   * What binds one mode's holds to connections.
   *
   * @param operations where the operations' transactions run
   * @param keeper the database's locks behind the holder rows
   * @param check checks the connections that hold locks, given a timeout in seconds
   * @param close gives back what the mode holds, and closes its connections
   */
  private record Binding(
      Transactions operations, HoldKeeper keeper, IntConsumer check, Runnable close) {}

  private ConnectionBoundBackend(
      JdbcBackend.Settings settings,
      ConnectionSource pool,
      Transactions poolTransactions,
      Binding binding,
      PostgresWakeups.Opener connections,
      BackendContext context) {
    super(
        settings,
        features(settings.mode(), settings.dialect()),
        connections,
        poolTransactions,
        context.scheduler());
    this.pool = pool;
    this.binding = binding;
    Sql sql =
        new Sql(poolTransactions.schema(), settings.dialect(), poolTransactions.multiStatements());
    Transactions operations = binding.operations();
    this.locks =
        new TableLockStore(
            operations, sql, wakeups.publisher(), context.clientId(), binding.keeper());
    this.renewal = new TableRenewal(operations, sql, false);
    this.admin =
        new Admin(operations, sql, locks, poolTransactions.schema(), settings.description());
    int checkSeconds = (int) Math.max(1, context.operationTimeout().toSeconds());
    this.liveness =
        context
            .scheduler()
            .scheduleWithFixedDelay(
                () -> {
                  try {
                    context.blockingExecutor().execute(() -> binding.check().accept(checkSeconds));
                  } catch (RejectedExecutionException closing) {
                    // The client is closing.
                  }
                },
                CHECK_MILLIS,
                CHECK_MILLIS,
                TimeUnit.MILLISECONDS);
  }

  /**
   * @param mode {@link JdbcMode#ADVISORY} or {@link JdbcMode#ROW}
   * @param dialect the database
   * @return what the mode offers there: reentrant and fair locks and mutexes with connection-bound
   *     holds, the operator's tools, read-write locks (not in advisory mode on MariaDB/MySQL, whose
   *     {@code GET_LOCK} has no shared side) and on PostgreSQL pushed wake-ups
   */
  static Set<Feature> features(JdbcMode mode, SqlDialect dialect) {
    EnumSet<Feature> offered =
        EnumSet.of(Feature.FAIR_LOCK, Feature.CONNECTION_BOUND_HOLDS, Feature.ADMIN);
    if (mode == JdbcMode.ROW || dialect == SqlDialect.POSTGRESQL) {
      offered.add(Feature.READ_WRITE_LOCK);
    }
    if (dialect == SqlDialect.POSTGRESQL) {
      offered.add(Feature.WAKEUP_PUSH);
    }
    return Set.copyOf(offered);
  }

  static String notOnH2(JdbcMode mode) {
    String name = mode.name().toLowerCase(java.util.Locale.ROOT);
    return "latchkey-jdbc's "
        + name
        + " mode needs PostgreSQL or MariaDB/MySQL; H2 has no "
        + (mode == JdbcMode.ADVISORY ? "advisory locks" : "way to tell a held row from a free one")
        + " (use the table mode)";
  }

  /**
   * Checks (or creates) the tables through the pool, then opens the backend.
   *
   * @param holdConnections where row mode's holds get their connections (closed by the backend)
   */
  static ConnectionBoundBackend open(
      JdbcBackend.Settings settings,
      ConnectionSource pool,
      ConnectionSource holdConnections,
      PostgresWakeups.Opener connections,
      BackendContext context) {
    if (settings.dialect() == SqlDialect.H2) {
      pool.close();
      holdConnections.close();
      throw new IllegalArgumentException(notOnH2(settings.mode()));
    }
    Transactions poolTransactions;
    try {
      poolTransactions = TableBackend.checkSchema(settings, pool, context);
    } catch (RuntimeException e) {
      holdConnections.close();
      throw e;
    }
    Binding binding =
        settings.mode() == JdbcMode.ROW
            ? row(settings, holdConnections, poolTransactions, context)
            : advisory(settings, connections, poolTransactions, context);
    return new ConnectionBoundBackend(
        settings, pool, poolTransactions, binding, connections, context);
  }

  /** Every operation on the one pinned connection that holds the client's advisory locks. */
  private static Binding advisory(
      JdbcBackend.Settings settings,
      PostgresWakeups.Opener connections,
      Transactions poolTransactions,
      BackendContext context) {
    SqlDialect dialect = settings.dialect();
    TableSchema schema = poolTransactions.schema();
    String clientId = context.clientId();
    AdvisoryHolds holds = new AdvisoryHolds(dialect, settings.tablePrefix(), clientId);
    List<String> deleteOwnHolds = new ArrayList<>();
    deleteOwnHolds.add("DELETE FROM " + schema.holders() + " WHERE client_id = ?");
    if (dialect == SqlDialect.POSTGRESQL) {
      // Sole holders (SoleHolder) of the connection that died.
      deleteOwnHolds.add(
          "UPDATE "
              + schema.resources()
              + " SET "
              + SoleHolder.CLEARED
              + " WHERE sole_client_id = ?");
    }
    PinnedSession session =
        new PinnedSession(
            connections,
            dialect == SqlDialect.POSTGRESQL
                ? PinnedSession.POSTGRES
                : PinnedSession.CHECK_EACH_TIME,
            // pgjdbc switches autocommit without a round trip, and its teardown must commit.
            dialect != SqlDialect.POSTGRESQL,
            connection -> {
              if (dialect == SqlDialect.POSTGRESQL) {
                try (PreparedStatement name =
                    connection.prepareStatement(
                        "SELECT set_config('application_name', ?, false)")) {
                  name.setString(1, AdvisoryHolds.sessionName(clientId));
                  name.executeQuery().close();
                }
              }
              for (String deleteOwn : deleteOwnHolds) {
                try (PreparedStatement delete = connection.prepareStatement(deleteOwn)) {
                  delete.setString(1, clientId);
                  delete.executeUpdate();
                }
              }
            },
            holds::releaseAll,
            context.events(),
            settings.description());
    Transactions pinned =
        new Transactions(
            session,
            dialect,
            schema,
            context.operationTimeout(),
            context.blockingExecutor(),
            settings.createSchema());
    return new Binding(pinned, holds, session::check, session::close);
  }

  /** Operations on the pool; each hold on a connection of its own. */
  private static Binding row(
      JdbcBackend.Settings settings,
      ConnectionSource holdConnections,
      Transactions poolTransactions,
      BackendContext context) {
    RowHolds holds =
        new RowHolds(
            poolTransactions.schema(),
            settings.dialect(),
            holdConnections,
            settings.holdConnections(),
            context.clientId(),
            context.events(),
            context.operationTimeout(),
            settings.description());
    return new Binding(poolTransactions, holds, holds::check, holds::close);
  }

  @Override
  public LockStore locks() {
    return locks;
  }

  @Override
  public SemaphoreStore semaphores() {
    throw new UnsupportedFeatureException(Feature.SEMAPHORE, description());
  }

  @Override
  public LeasedSemaphoreStore leasedSemaphores() {
    throw new UnsupportedFeatureException(Feature.LEASED_SEMAPHORE, description());
  }

  @Override
  public LatchStore latches() {
    throw new UnsupportedFeatureException(Feature.COUNT_DOWN_LATCH, description());
  }

  @Override
  public AdminStore admin() {
    return admin;
  }

  @Override
  public CompletionStage<RenewResult> renew(Collection<GrantRef> grants, long leaseMillis) {
    return renewal
        .renew(grants, leaseMillis)
        .thenApply(
            renewed -> {
              Set<GrantRef> lostHere = binding.keeper().gone(grants);
              if (lostHere.isEmpty()) {
                return renewed;
              }
              Set<GrantRef> gone = new HashSet<>(renewed.gone());
              gone.addAll(lostHere);
              Map<GrantRef, Throwable> failed = new HashMap<>(renewed.failed());
              failed.keySet().removeAll(gone);
              return new RenewResult(gone, failed, renewed.validForMillis());
            });
  }

  @Override
  public void close() {
    liveness.cancel(false);
    wakeups.close();
    binding.close().run();
    pool.close();
  }

  /**
   * The operator's tools of the connection-bound modes: table mode's, except that a listing
   * inspects each held name (which drops holders whose connection ended) and that there is no
   * presence.
   */
  private static final class Admin extends TableAdminStore {
    private final Transactions operations;
    private final String heldNames;
    private final String description;

    Admin(
        Transactions operations,
        Sql sql,
        TableLockStore locks,
        TableSchema schema,
        String description) {
      super(operations, sql, locks);
      this.operations = operations;
      this.description = description;
      this.heldNames =
          "SELECT DISTINCT r.name FROM "
              + schema.holders()
              + " h JOIN "
              + schema.resources()
              + " r ON r.res_key = h.res_key WHERE r.kind = 'LOCK'"
              + (sql.soleHolders
                  ? " UNION SELECT name FROM "
                      + schema.resources()
                      + " WHERE kind = 'LOCK' AND sole_holder_key IS NOT NULL"
                  : "")
              + " ORDER BY 1";
    }

    @Override
    public CompletionStage<List<LockInfo>> list() {
      return operations
          .submit(
              "listing of locks",
              c -> {
                List<String> names = new ArrayList<>();
                try (PreparedStatement select = c.prepareStatement(heldNames);
                    ResultSet rs = select.executeQuery()) {
                  while (rs.next()) {
                    names.add(rs.getString(1));
                  }
                }
                return names;
              })
          .thenCompose(
              names -> {
                CompletionStage<List<LockInfo>> listed =
                    CompletableFuture.completedFuture(new ArrayList<>());
                for (String name : names) {
                  listed =
                      listed.thenCompose(
                          infos ->
                              inspect(name)
                                  .thenApply(
                                      info -> {
                                        info.ifPresent(infos::add);
                                        return infos;
                                      }));
                }
                return listed;
              });
    }

    @Override
    public CompletionStage<List<ClientInfo>> clients() {
      return CompletableFuture.failedFuture(
          new UnsupportedFeatureException(Feature.PRESENCE, description));
    }

    @Override
    public CompletionStage<Void> heartbeat(ClientInfo self, long timeToLiveMillis) {
      return CompletableFuture.failedFuture(
          new UnsupportedFeatureException(Feature.PRESENCE, description));
    }

    @Override
    public CompletionStage<Void> leave(String clientId) {
      return CompletableFuture.failedFuture(
          new UnsupportedFeatureException(Feature.PRESENCE, description));
    }
  }
}
