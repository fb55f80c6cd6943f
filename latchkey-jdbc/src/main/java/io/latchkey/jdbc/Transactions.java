package io.latchkey.jdbc;

import io.latchkey.spi.CallerWaits;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs each backend operation as one short transaction on a connection of its own, off the engine's
 * threads: on the blocking executor, or on the calling thread when that thread waits for the answer
 * anyway ({@link CallerWaits}: the blocking {@code lock()} and {@code unlock()}) and the connection
 * source keeps to the deadline by itself ({@link ConnectionSource#keepsDeadline()}).
 *
 * <p>At most once (the SPI's contract): a transaction the database rolled back by itself (a
 * deadlock, a serialization failure, a lock wait that timed out, the unique key of a resource row
 * that another transaction inserted first) was not applied, so it runs again, with a short jittered
 * pause, for as long as the operation's time lasts. Any other failure is the operation's answer:
 * after an I/O error nobody knows whether the commit happened. An operation whose time passed
 * before it could start (no connection was free) is not sent at all. The connection's network
 * timeout is the operation's time left, so that a database that stops answering frees the thread
 * soon after the engine gave up.
 */
final class Transactions {
  private static final Logger LOG = LoggerFactory.getLogger(Transactions.class);
  private static final long MAX_RETRY_PAUSE_MILLIS = 20;

  /** The statements of one operation, run inside its transaction. */
  @FunctionalInterface
  interface Work<T> {
    T run(Connection connection) throws SQLException;
  }

  /** Statements without an answer, run inside the operation's transaction. */
  @FunctionalInterface
  interface Statements {
    void run(Connection connection) throws SQLException;
  }

  private static final int UNKNOWN_ISOLATION = -1;

  /** What the work running on this thread asked to be done once its transaction commits. */
  private static final ThreadLocal<@Nullable List<Runnable>> AFTER_COMMIT = new ThreadLocal<>();

  private final ConnectionSource connections;
  private volatile int sourceIsolation = UNKNOWN_ISOLATION;
  private volatile boolean multiStatements;
  private final SqlDialect dialect;
  private final TableSchema schema;
  private final long timeoutNanos;
  private final Executor executor;
  private final boolean makesMissingTables;

  /**
   * @param makesMissingTables true (the backend was opened with {@code createSchema}) to make the
   *     tables again when an operation finds them missing, then run it again
   */
  Transactions(
      ConnectionSource connections,
      SqlDialect dialect,
      TableSchema schema,
      Duration operationTimeout,
      Executor executor,
      boolean makesMissingTables) {
    this.connections = connections;
    this.dialect = dialect;
    this.schema = schema;
    this.timeoutNanos = operationTimeout.toNanos();
    this.executor = executor;
    this.makesMissingTables = makesMissingTables;
  }

  SqlDialect dialect() {
    return dialect;
  }

  /**
   * Asks a connection of the source whether it sends texts of several statements ({@link
   * Sql#multiStatementsAllowed}); called once, when the backend opens, inside that transaction.
   */
  void learnMultiStatements(Connection connection) throws SQLException {
    multiStatements = Sql.multiStatementsAllowed(connection, dialect);
  }

  /**
   * @return whether the source's connections send texts of several statements, as {@link
   *     #learnMultiStatements} found (false before it ran)
   */
  boolean multiStatements() {
    return multiStatements;
  }

  TableSchema schema() {
    return schema;
  }

  /**
   * @param operation what is done, for messages
   * @param work the statements
   * @return completes with the work's result once committed, or fails with the cause
   */
  <T> CompletionStage<T> submit(String operation, Work<T> work) {
    long deadline = System.nanoTime() + timeoutNanos;
    if (CallerWaits.take() && connections.keepsDeadline()) {
      // The caller waits for this answer anyway: run it here, without the hand-off to the
      // executor and back. runUntil keeps it within the deadline (the network timeout), and so
      // does the borrowing of its connection; nothing else could cut it short here.
      CompletableFuture<T> answer = new CompletableFuture<>();
      try {
        answer.complete(runUntil(operation, work, deadline));
      } catch (RuntimeException e) {
        answer.completeExceptionally(
            e instanceof CompletionException ? e : new CompletionException(e));
      }
      return answer;
    }
    return CompletableFuture.supplyAsync(() -> runUntil(operation, work, deadline), executor);
  }

  /**
   * @param operation what is done, for messages
   * @param statements the statements
   * @return completes once committed, or fails with the cause
   */
  CompletionStage<Void> execute(String operation, Statements statements) {
    return submit(
            operation,
            c -> {
              statements.run(c);
              return Boolean.TRUE;
            })
        .thenApply(done -> null);
  }

  /**
   * Runs an action right after the transaction of the work that calls this commits, on the same
   * thread; it is dropped if that transaction does not commit (a rolled-back try that runs again
   * asks again). The action must be short and must not block: hand anything longer to an executor.
   *
   * @param action what to do
   * @throws IllegalStateException if the calling thread is not running a transaction's work
   */
  static void afterCommit(Runnable action) {
    List<Runnable> actions = AFTER_COMMIT.get();
    if (actions == null) {
      throw new IllegalStateException("afterCommit is only for a transaction's work");
    }
    actions.add(action);
  }

  /** Runs the work on the calling thread (for opening, closing and tests). */
  <T> T runUntil(String operation, Work<T> work, long deadlineNanos) {
    boolean endedBefore = false;
    boolean tablesMade = false;
    for (int attempt = 1; ; attempt++) {
      if (deadlineNanos - System.nanoTime() <= 0) {
        throw new CompletionException(
            new TimeoutException(
                operation + " was not sent: its time ran out before it could start"));
      }
      try {
        return runOnce(work, deadlineNanos);
      } catch (SQLException e) {
        if (dialect.isMissingSchema(e)) {
          if (makesMissingTables && !tablesMade) {
            // Once per operation: still missing after that, the message says what to run.
            tablesMade = true;
            makeMissingTables(deadlineNanos);
            continue;
          }
          throw new CompletionException(schema.missing(e));
        }
        if (e instanceof SQLTimeoutException timedOut) {
          throw new CompletionException(ranOutOfTime(timedOut));
        }
        if (connections.endedBeforeItsAnswer(e) && !endedBefore) {
          // Once: a second end in a row is the database going away.
          endedBefore = true;
          continue;
        }
        if (!dialect.isRetryable(e)) {
          throw new CompletionException(e);
        }
        long pause =
            ThreadLocalRandom.current().nextLong(1, Math.min(MAX_RETRY_PAUSE_MILLIS, attempt) + 1);
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(pause));
      }
    }
  }

  /**
   * Makes the tables that went missing after the backend opened (the database came back empty: a
   * wiped volume, a replica promoted without them), as opening did. Every row went with them, so
   * the operation that runs next finds no holder rows: a renewal or a release reports its grants
   * gone, and the counters start again under the database clock's floor. A failure here is not the
   * operation's answer: another operation or client may have made them at the same moment
   * (PostgreSQL refuses the second of two concurrent {@code CREATE TABLE IF NOT EXISTS}); the
   * operation runs again and answers for itself.
   */
  private void makeMissingTables(long deadlineNanos) {
    try {
      if (runOnce(this::createMissingTables, deadlineNanos)) {
        LOG.warn(
            "the latchkey tables ({}*) were missing, or made by an earlier latchkey: made them (every"
                + " lock, queue place and counter held in a missing table is gone)",
            schema.prefix());
      }
    } catch (SQLException e) {
      LOG.warn("making the missing latchkey tables again failed: {}", e.toString());
    }
  }

  /**
   * Creates the tables if any is missing, inside the caller's transaction.
   *
   * @return whether they were missing
   */
  boolean createMissingTables(Connection connection) throws SQLException {
    if (schema.exists(connection)) {
      return false;
    }
    schema.create(connection);
    return true;
  }

  /** An after-commit action's failure is not the operation's: the transaction did commit. */
  private static void runQuietly(Runnable action) {
    try {
      action.run();
    } catch (RuntimeException e) {
      LOG.warn("an action after a commit failed", e);
    }
  }

  /**
   * A driver's timeout (no connection free in time, a query timeout) as the SPI's way of saying
   * that the operation's time ran out. A socket read timeout keeps the driver's exception: its
   * cause already says so.
   */
  private static TimeoutException ranOutOfTime(SQLTimeoutException e) {
    TimeoutException timeout = new TimeoutException(e.getMessage());
    timeout.initCause(e);
    return timeout;
  }

  private <T> T runOnce(Work<T> work, long deadlineNanos) throws SQLException {
    Connection connection = connections.borrow(deadlineNanos);
    boolean broken = false;
    try {
      boolean autoCommit = connection.getAutoCommit();
      if (autoCommit) {
        connection.setAutoCommit(false);
      }
      int isolation = isolationOf(connection);
      if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
        connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      }
      int networkTimeout = setNetworkTimeout(connection, deadlineNanos);
      List<Runnable> afterCommit = new ArrayList<>(0);
      AFTER_COMMIT.set(afterCommit);
      try {
        T result = work.run(connection);
        connection.commit();
        AFTER_COMMIT.remove();
        afterCommit.forEach(Transactions::runQuietly);
        return result;
      } catch (SQLException | RuntimeException e) {
        broken = isBroken(e);
        if (!broken) {
          rollbackQuietly(connection);
        }
        throw e;
      } finally {
        AFTER_COMMIT.remove();
        if (!broken) {
          restore(connection, autoCommit, isolation, networkTimeout);
        }
      }
    } catch (SQLException e) {
      broken = broken || isBroken(e);
      throw e;
    } finally {
      connections.giveBack(connection, broken);
    }
  }

  /**
   * The isolation level of the source's connections, asked of the first connection only: reading it
   * is a round trip on PostgreSQL's driver, and on H2's TCP server a query of its sessions table
   * that can fail inside the server under concurrency.
   */
  private int isolationOf(Connection connection) throws SQLException {
    int known = sourceIsolation;
    if (known == UNKNOWN_ISOLATION) {
      known = connections.isolation().orElse(UNKNOWN_ISOLATION);
      if (known == UNKNOWN_ISOLATION) {
        known = connection.getTransactionIsolation();
      }
      sourceIsolation = known;
    }
    return known;
  }

  /** Sets the network timeout to the time left; answers the one to restore, or -1. */
  private static int setNetworkTimeout(Connection connection, long deadlineNanos)
      throws SQLException {
    long leftMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()));
    try {
      int before = connection.getNetworkTimeout();
      connection.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, leftMillis));
      return before;
    } catch (SQLFeatureNotSupportedException | UnsupportedOperationException notOverTheNetwork) {
      // An in-process database (H2 embedded) has no network to time out.
      return -1;
    }
  }

  private static void restore(
      Connection connection, boolean autoCommit, int isolation, int networkTimeout)
      throws SQLException {
    if (networkTimeout >= 0) {
      connection.setNetworkTimeout(Runnable::run, networkTimeout);
    }
    if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
      connection.setTransactionIsolation(isolation);
    }
    if (autoCommit) {
      connection.setAutoCommit(true);
    }
  }

  private static void rollbackQuietly(Connection connection) {
    try {
      connection.rollback();
    } catch (SQLException ignored) {
      // The database rolls back an unfinished transaction itself when the connection ends.
    }
  }

  /** Whether a failure leaves the connection unusable (it is closed rather than pooled). */
  static boolean isBroken(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLNonTransientConnectionException
          || t instanceof SQLTransientConnectionException
          || t instanceof SQLRecoverableException
          || t instanceof SQLTimeoutException
          || t instanceof java.io.IOException) {
        return true;
      }
      if (t instanceof SQLException sql
          && sql.getSQLState() != null
          && (sql.getSQLState().startsWith("08") || sql.getSQLState().startsWith("57P"))) {
        return true;
      }
    }
    return false;
  }
}
