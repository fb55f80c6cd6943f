package io.latchkey.jdbc;

import io.latchkey.BackendTimeoutException;
import io.latchkey.BackendUnavailableException;
import io.latchkey.Feature;
import io.latchkey.spi.AdminStore;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.LatchStore;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.RenewResult;
import io.latchkey.spi.SemaphoreStore;
import java.util.Collection;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;

/**
 * Table mode: every primitive on a lease table.
 *
 * <p>How it works. Four tables (see the shipped {@code schema/*.sql}): a row per resource (lock
 * name, semaphore, leased semaphore, latch) with its fencing counter, count, wait-queue counter and
 * pending hand-off; a row per holder (lock owner or leased permit) with its holds, deadline and
 * token; a row per queued waiter; a row per live client. Every operation is one short transaction
 * ({@link Transactions}) that first locks the resource's row, which serialises the operations on
 * one resource and nothing else, and reads the database's clock once: deadlines are written and
 * judged by that clock only, never the client's. A holder that crashes keeps its rows until their
 * deadline passes; the next operation on the resource drops them. Renewal is one {@code UPDATE} per
 * batch ({@link TableRenewal}). Hold counts live in the holder rows, so an owner token re-enters
 * from any process ({@link Feature#REMOTE_OWNER_TOKENS}). PostgreSQL pushes wake-ups by NOTIFY from
 * the releasing transaction ({@link PostgresWakeups}); on MariaDB and H2 the engine's waiters poll
 * with back-off, bounded by the holder's remaining lease that a refusal reports.
 */
final class TableBackend extends JdbcModeBackend {
  private static final java.time.Duration SCHEMA_CREATION_TIMEOUT =
      java.time.Duration.ofSeconds(30);

  private final ConnectionSource connections;
  private final TableLockStore locks;
  private final TablePermitStores permits;
  private final TableAdminStore admin;
  private final TableRenewal renewal;

  private TableBackend(
      JdbcBackend.Settings settings,
      ConnectionSource connections,
      Transactions transactions,
      PostgresWakeups.Opener listenerConnections,
      BackendContext context) {
    super(
        settings,
        features(settings.dialect() == SqlDialect.POSTGRESQL),
        listenerConnections,
        transactions,
        context.scheduler());
    this.connections = connections;
    Sql sql = new Sql(transactions.schema(), settings.dialect(), transactions.multiStatements());
    WakeupPublisher publisher = wakeups.publisher();
    String clientId = context.clientId();
    this.locks = new TableLockStore(transactions, sql, publisher, clientId);
    this.permits = new TablePermitStores(transactions, sql, publisher, clientId);
    this.admin = new TableAdminStore(transactions, sql, locks);
    this.renewal = new TableRenewal(transactions, sql);
  }

  /**
   * @param pushesWakeups whether the database pushes wake-ups (PostgreSQL's LISTEN/NOTIFY)
   * @return what the table mode offers: every primitive with explicit leases, owner tokens from
   *     other processes, admin and presence; not connection-bound holds, waiting by watch,
   *     revocation or the newer synchronizer operations (not written for tables yet)
   */
  static Set<Feature> features(boolean pushesWakeups) {
    EnumSet<Feature> offered =
        EnumSet.of(
            Feature.FAIR_LOCK,
            Feature.READ_WRITE_LOCK,
            Feature.SEMAPHORE,
            Feature.LEASED_SEMAPHORE,
            Feature.COUNT_DOWN_LATCH,
            Feature.LEASE_TIME,
            Feature.PERMIT_LEASE_TIME,
            Feature.REMOTE_OWNER_TOKENS,
            Feature.ADMIN,
            Feature.PRESENCE);
    if (pushesWakeups) {
      offered.add(Feature.WAKEUP_PUSH);
    }
    return Set.copyOf(offered);
  }

  /**
   * Checks (or creates) the schema within the operation timeout, then starts listening for wake-ups
   * on PostgreSQL.
   */
  static TableBackend open(
      JdbcBackend.Settings settings,
      ConnectionSource connections,
      PostgresWakeups.Opener listenerConnections,
      BackendContext context) {
    Transactions transactions = checkSchema(settings, connections, context);
    return new TableBackend(settings, connections, transactions, listenerConnections, context);
  }

  /**
   * Checks (or creates) the schema within the operation timeout; closes the connections and throws
   * if it cannot.
   *
   * @return the transactions of the operations, on {@code connections}
   */
  static Transactions checkSchema(
      JdbcBackend.Settings settings, ConnectionSource connections, BackendContext context) {
    TableSchema schema =
        new TableSchema(settings.dialect(), settings.tablePrefix(), settings.mode());
    Transactions transactions =
        new Transactions(
            connections,
            settings.dialect(),
            schema,
            context.operationTimeout(),
            context.blockingExecutor(),
            settings.createSchema());
    try {
      transactions.runUntil(
          "opening " + settings.description(),
          connection -> {
            if (settings.createSchema()) {
              transactions.createMissingTables(connection);
            }
            schema.check(connection);
            transactions.learnMultiStatements(connection);
            return Boolean.TRUE;
          },
          System.nanoTime() + openTimeout(settings, context).toNanos());
    } catch (CompletionException e) {
      connections.close();
      throw openFailure(settings, e.getCause() == null ? e : e.getCause());
    }
    return transactions;
  }

  /**
   * The bound of opening: the operation timeout, or at least {@link #SCHEMA_CREATION_TIMEOUT} when
   * the tables may have to be created (DDL is slow, and happens once).
   */
  private static java.time.Duration openTimeout(
      JdbcBackend.Settings settings, BackendContext context) {
    java.time.Duration timeout = context.operationTimeout();
    return settings.createSchema() && timeout.compareTo(SCHEMA_CREATION_TIMEOUT) < 0
        ? SCHEMA_CREATION_TIMEOUT
        : timeout;
  }

  static RuntimeException openFailure(JdbcBackend.Settings settings, Throwable cause) {
    if (cause instanceof RuntimeException runtime && !(cause instanceof CompletionException)) {
      return runtime;
    }
    String message = "cannot open " + settings.description() + ": " + cause.getMessage();
    if (cause instanceof TimeoutException) {
      BackendTimeoutException timeout = new BackendTimeoutException(message);
      // Its only constructor sets the cause (to none): the driver's error goes along suppressed.
      timeout.addSuppressed(cause);
      return timeout;
    }
    return new BackendUnavailableException(message, cause);
  }

  @Override
  public LockStore locks() {
    return locks;
  }

  @Override
  public SemaphoreStore semaphores() {
    return permits.semaphores();
  }

  @Override
  public LeasedSemaphoreStore leasedSemaphores() {
    return permits.leasedSemaphores();
  }

  @Override
  public LatchStore latches() {
    return permits.latches();
  }

  @Override
  public AdminStore admin() {
    return admin;
  }

  @Override
  public CompletionStage<RenewResult> renew(Collection<GrantRef> grants, long leaseMillis) {
    return renewal.renew(grants, leaseMillis);
  }

  @Override
  public void close() {
    wakeups.close();
    connections.close();
  }
}
