package io.latchkey.jdbc;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The small pool of a backend opened from a URI: at most {@code maxSize} connections, made by
 * {@link DriverManager} on demand and kept open between operations. Users who want a full pool
 * (HikariCP) open the backend over their own data source instead.
 *
 * <p>Each connection is set to read committed and to autocommit off when it is made, once: the
 * backend's transactions ({@link Transactions}, the pool's only user) need nothing else, and they
 * then switch nothing per operation. Asking a connection for its isolation level costs a round trip
 * on some drivers (and, on H2's TCP server, can fail inside the server under concurrency);
 * MariaDB's driver sends {@code set autocommit} to the server each time it changes, a round trip
 * each way per operation that was 4 of a lock cycle's 15 statements.
 *
 * <p>A connection that failed with an I/O error is closed, and so is every idle one: a server that
 * restarted or a network that broke took them all, and finding that out one failed operation at a
 * time would fail as many operations as the pool has connections.
 *
 * <p>A connection is opened on a thread of the pool's own, and the borrower waits for it only until
 * its deadline: the driver bounds each step of opening one (the TCP connect, each read of the
 * handshake) by its own timeouts, in whole seconds on PostgreSQL, which add up to more than the
 * time an operation has left, and a blocking call on the caller's thread has nothing else to end
 * that wait. A connection that opens after its borrower gave up serves the next one.
 */
final class ConnectionPool implements ConnectionSource {
  private final String url;
  private final Properties properties;
  private final int maxSize;
  private final boolean keepsDeadline;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition returned = lock.newCondition();
  private final Deque<Connection> idle = new ArrayDeque<>();
  private int open;
  private boolean closed;

  /** Opens connections; a thread lives while it opens one and a minute after. */
  private final ExecutorService opener =
      Executors.newCachedThreadPool(
          task -> {
            Thread thread = new Thread(task, "latchkey-jdbc-connect");
            thread.setDaemon(true);
            return thread;
          });

  /**
   * @param keepsDeadline whether the driver, as the URL sets it up, opens a connection within the
   *     operation timeout and obeys a connection's network timeout ({@link #keepsDeadline()})
   */
  ConnectionPool(String url, Properties properties, int maxSize, boolean keepsDeadline) {
    this.url = url;
    this.properties = properties;
    this.maxSize = maxSize;
    this.keepsDeadline = keepsDeadline;
  }

  /**
   * Its wait for a free connection, and for one it opens, ends at the deadline; whether the driver
   * then keeps to a connection's network timeout is the URL's matter ({@link
   * JdbcBackendProvider#keepsDeadline}).
   */
  @Override
  public boolean keepsDeadline() {
    return keepsDeadline;
  }

  @Override
  public Connection borrow(long deadlineNanos) throws SQLException {
    lock.lock();
    try {
      while (true) {
        if (closed) {
          throw new SQLException("the backend is closed", "08003");
        }
        Connection connection = idle.pollFirst();
        if (connection != null) {
          return connection;
        }
        if (open < maxSize) {
          open++;
          break;
        }
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
          throw new SQLTimeoutException(
              "all " + maxSize + " connections of the pool are in use", "08001");
        }
        returned.awaitNanos(left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SQLException("interrupted while waiting for a connection", "08001", e);
    } finally {
      lock.unlock();
    }
    CompletableFuture<Connection> opening;
    try {
      opening = CompletableFuture.supplyAsync(this::open, opener);
    } catch (RejectedExecutionException closedMeanwhile) {
      released();
      throw new SQLException("the backend is closed", "08003", closedMeanwhile);
    }
    try {
      return opening.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      released();
      Throwable cause = e.getCause();
      if (cause instanceof SQLException sql) {
        throw sql;
      }
      throw cause instanceof RuntimeException runtime ? runtime : new CompletionException(cause);
    } catch (TimeoutException | InterruptedException e) {
      keepIfItOpens(opening);
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
        throw new SQLException("interrupted while opening a connection", "08001", e);
      }
      throw new SQLTimeoutException(
          "no connection to the database opened before the operation's deadline", "08001", e);
    }
  }

  /** A connection that opens after its borrower gave up serves the next borrower. */
  // The stage routes its own outcome: into the pool, or the place given back.
  @SuppressWarnings("FutureReturnValueIgnored")
  private void keepIfItOpens(CompletableFuture<Connection> opening) {
    opening.whenComplete(
        (late, failure) -> {
          if (late != null) {
            giveBack(late, false);
          } else {
            released();
          }
        });
  }

  /** A connection for transactions, or the driver's failure as a {@link CompletionException}. */
  private Connection open() {
    try {
      return forTransactions(DriverManager.getConnection(url, properties));
    } catch (SQLException e) {
      throw new CompletionException(e);
    }
  }

  /** Gives back the place of a connection that was not opened. */
  private void released() {
    lock.lock();
    try {
      open--;
      returned.signal();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public OptionalInt isolation() {
    return OptionalInt.of(Connection.TRANSACTION_READ_COMMITTED);
  }

  private static Connection forTransactions(Connection connection) throws SQLException {
    try {
      connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      connection.setAutoCommit(false);
      return connection;
    } catch (SQLException | RuntimeException e) {
      closeQuietly(connection);
      throw e;
    }
  }

  @Override
  public void giveBack(Connection connection, boolean broken) {
    List<Connection> toClose = new ArrayList<>();
    lock.lock();
    try {
      if (broken || closed) {
        toClose.add(connection);
        toClose.addAll(idle);
        idle.clear();
        open -= toClose.size();
        returned.signalAll();
      } else {
        idle.addFirst(connection);
        returned.signal();
      }
    } finally {
      lock.unlock();
    }
    toClose.forEach(ConnectionPool::closeQuietly);
  }

  @Override
  public void close() {
    List<Connection> toClose;
    lock.lock();
    try {
      closed = true;
      opener.shutdown();
      toClose = new ArrayList<>(idle);
      idle.clear();
      open -= toClose.size();
      returned.signalAll();
    } finally {
      lock.unlock();
    }
    toClose.forEach(ConnectionPool::closeQuietly);
  }

  /** Opens a connection outside the pool (the one that listens for notifications). */
  Connection openDedicated() throws SQLException {
    return DriverManager.getConnection(url, properties);
  }

  /** Aborts a connection that may be broken, ignoring failures: it is gone either way. */
  static void closeQuietly(Connection connection) {
    try {
      // Abort rather than close: close() on a connection whose peer vanished can wait for the
      // socket timeout.
      connection.abort(Runnable::run);
    } catch (SQLException | RuntimeException ignored) {
      try {
        connection.close();
      } catch (SQLException alsoIgnored) {
        // Nothing more to do: the connection is gone either way.
      }
    }
  }
}
