package io.latchkey.jdbc;

import io.latchkey.spi.GrantEvents;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one connection on which a client of advisory mode holds its advisory locks, lent to one
 * operation at a time. The database frees every advisory lock of a connection when it ends, so the
 * connection is the client's session: when it breaks (an operation fails with an I/O error, or the
 * periodic {@link #check} finds it dead: killed by an operator, a server restart, a network that
 * broke), every grant of the client is reported lost at once ({@link GrantEvents#allLost}) and the
 * connection is dropped. The next operation opens a new one, which first deletes the holder rows
 * the old one left, so that they can never pass for holds of the new connection.
 */
final class PinnedSession implements ConnectionSource {
  private static final Logger LOG = LoggerFactory.getLogger(PinnedSession.class);

  /** Prepares a connection: a new one before any operation runs on it, or one about to close. */
  @FunctionalInterface
  interface Setup {
    void prepare(Connection connection) throws SQLException;
  }

  /**
   * How a database tells that it ended the pinned connection's session.
   *
   * @param trustsRecentAnswers whether a connection that answered recently may skip the check
   *     before an operation: an end while it was idle then shows as {@code endedByServer} on that
   *     operation
   * @param endedByServer whether the failure of an operation on the connection says that the server
   *     ended the session (its every lock with it)
   */
  record SessionEnd(boolean trustsRecentAnswers, Predicate<SQLException> endedByServer) {}

  /** MariaDB/MySQL: checked before every operation (a ping); an end is a connection error. */
  static final SessionEnd CHECK_EACH_TIME = new SessionEnd(false, e -> false);

  /**
   * PostgreSQL: a session ended by {@code pg_terminate_backend}, a shutdown, a crash of another
   * backend or its idle timeout sends its {@code FATAL} error (admin_shutdown 57P01, crash_shutdown
   * 57P02, cannot_connect_now 57P03, idle_session_timeout 57P05) before it closes, and that error
   * is the answer the next operation reads. (57P04, database_dropped, is left alone: nothing to run
   * again on.)
   */
  static final SessionEnd POSTGRES = new SessionEnd(true, PinnedSession::endedByPostgres);

  private static boolean endedByPostgres(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql
          && sql.getSQLState() != null
          && sql.getSQLState().startsWith("57P0")
          && !sql.getSQLState().equals("57P04")) {
        return true;
      }
    }
    return false;
  }

  private final PostgresWakeups.Opener opener;
  private final SessionEnd sessionEnd;
  private final boolean autoCommitOff;
  private final Setup setup;
  private final Setup teardown;
  private final GrantEvents events;
  private final String description;
  private final ReentrantLock lent = new ReentrantLock();
  private @Nullable Connection connection;

  /** When the connection last answered an operation in full ({@link System#nanoTime()}). */
  private long answeredAt;

  private volatile boolean closed;

  /**
   * @param opener opens a new connection
   * @param sessionEnd how the database tells that it ended the session
   * @param autoCommitOff whether the connection is kept in read committed with autocommit off
   *     between operations, so that {@link Transactions} switches nothing per operation (MariaDB's
   *     driver sends each switch to the server: four round trips per operation otherwise)
   * @param setup prepares a new connection before any operation
   * @param teardown runs before the connection is closed with the backend (a pooled connection
   *     lives on)
   * @param events where the loss of the connection is reported
   * @param description the backend, for messages
   */
  PinnedSession(
      PostgresWakeups.Opener opener,
      SessionEnd sessionEnd,
      boolean autoCommitOff,
      Setup setup,
      Setup teardown,
      GrantEvents events,
      String description) {
    this.opener = opener;
    this.sessionEnd = sessionEnd;
    this.autoCommitOff = autoCommitOff;
    this.setup = setup;
    this.teardown = teardown;
    this.events = events;
    this.description = description;
  }

  @Override
  public Connection borrow(long deadlineNanos) throws SQLException {
    try {
      if (!lent.tryLock(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS)) {
        throw new SQLTimeoutException(
            "the pinned connection of advisory mode stayed busy with other operations", "08001");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SQLException("interrupted while waiting for the pinned connection", "08001", e);
    }
    try {
      if (closed) {
        throw new SQLException("the backend is closed", "08003");
      }
      Connection current = connection;
      int secondsLeft =
          (int) Math.max(1, TimeUnit.NANOSECONDS.toSeconds(deadlineNanos - System.nanoTime()));
      if (current != null
          && !(sessionEnd.trustsRecentAnswers() && answeredRecently())
          && !isValid(current, secondsLeft)) {
        // Killed while idle (an operator, or another client's eviction): every hold on it is
        // gone, and an operation on it would fail with an error that leaves its outcome unknown.
        drop("it was found closed before an operation");
        current = null;
      }
      if (current == null) {
        current = opener.open();
        try {
          current.setAutoCommit(true);
          setup.prepare(current);
          if (autoCommitOff) {
            current.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            current.setAutoCommit(false);
          }
        } catch (SQLException | RuntimeException e) {
          abortQuietly(current);
          throw e;
        }
        connection = current;
      }
      return current;
    } catch (SQLException | RuntimeException e) {
      lent.unlock();
      throw e;
    }
  }

  /**
   * Whether the connection answered an operation less than the liveness check's period ago: then,
   * where {@link SessionEnd#trustsRecentAnswers}, it is not checked with a round trip before the
   * next operation (a round trip costs as much as an uncontended operation), as HikariCP skips its
   * check of a connection used within the last 500 ms. A session that the server ended meanwhile
   * answers that operation with its end, and {@link #endedBeforeItsAnswer} lets the operation run
   * again on a new connection; a connection that broke silently (a network) fails the operation
   * with a connection error, as a break during an operation does. Either way the connection is
   * dropped and its grants reported lost.
   */
  private boolean answeredRecently() {
    return System.nanoTime() - answeredAt
        < TimeUnit.MILLISECONDS.toNanos(ConnectionBoundBackend.CHECK_MILLIS);
  }

  @Override
  public OptionalInt isolation() {
    return autoCommitOff
        ? OptionalInt.of(Connection.TRANSACTION_READ_COMMITTED)
        : OptionalInt.empty();
  }

  @Override
  public void giveBack(Connection returned, boolean broken) {
    try {
      if (broken && returned == connection) {
        drop("an operation on it failed with a connection error");
      } else if (!broken && returned == connection) {
        answeredAt = System.nanoTime();
      }
    } finally {
      lent.unlock();
    }
  }

  /**
   * An operation that failed because the server ended the session may run again, once more, on a
   * new connection: whatever it did died with the session (the advisory locks with the session
   * itself, the holder rows of this client deleted by the new connection's setup before anything
   * runs on it), as did every grant of the client, which {@link #giveBack} has reported lost. So an
   * acquire asks afresh, and a release finds its holder gone (the engine reports the lease lost),
   * as if the session had ended before the operation was sent, which is what an end while the
   * connection was idle is.
   */
  @Override
  public boolean endedBeforeItsAnswer(SQLException e) {
    return sessionEnd.endedByServer().test(e);
  }

  /**
   * Checks that the connection lives (a round trip within {@code timeoutSeconds}); a dead one is
   * dropped and its grants reported lost. Skipped while an operation uses the connection: that
   * operation finds out itself. Runs on the blocking executor.
   */
  void check(int timeoutSeconds) {
    if (closed || !lent.tryLock()) {
      return;
    }
    try {
      Connection current = connection;
      if (current != null && !isValid(current, timeoutSeconds)) {
        drop("the liveness check found it closed");
      }
    } finally {
      lent.unlock();
    }
  }

  private static boolean isValid(Connection connection, int timeoutSeconds) {
    try {
      return connection.isValid(timeoutSeconds);
    } catch (SQLException | RuntimeException e) {
      return false;
    }
  }

  /** Called with the connection lent to the caller. */
  private void drop(String why) {
    Connection dead = connection;
    connection = null;
    if (dead != null) {
      abortQuietly(dead);
    }
    if (!closed) {
      String reason =
          "the connection that held the advisory locks of " + description + " ended: " + why;
      LOG.warn("{}; every lock it held is lost", reason);
      events.allLost(reason);
    }
  }

  @Override
  public void close() {
    closed = true;
    lent.lock();
    try {
      Connection current = connection;
      connection = null;
      if (current != null) {
        try {
          if (autoCommitOff) {
            current.setAutoCommit(true);
          }
          teardown.prepare(current);
        } catch (SQLException | RuntimeException e) {
          LOG.debug("giving back the advisory locks before closing failed", e);
        }
        try {
          // Closing ends the session (unless it is pooled), which frees its advisory locks.
          current.close();
        } catch (SQLException e) {
          abortQuietly(current);
        }
      }
    } finally {
      lent.unlock();
    }
  }

  private static void abortQuietly(Connection connection) {
    ConnectionPool.closeQuietly(connection);
  }
}
