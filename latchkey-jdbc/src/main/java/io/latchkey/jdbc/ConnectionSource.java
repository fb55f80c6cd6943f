package io.latchkey.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.OptionalInt;
import javax.sql.DataSource;

/** Where a backend gets its connections: a user's {@link DataSource}, or its own small pool. */
interface ConnectionSource extends AutoCloseable {
  /**
   * @param deadlineNanos the {@link System#nanoTime()} by which a connection must be had
   * @return a connection, to be given back with {@link #giveBack}
   * @throws SQLException if none can be had by then
   */
  Connection borrow(long deadlineNanos) throws SQLException;

  /**
   * @param connection a borrowed connection
   * @param broken true if it failed in a way that leaves it unusable (an I/O error)
   */
  void giveBack(Connection connection, boolean broken);

  /**
   * @return the isolation level that every connection it hands out has, if the source set it
   *     itself; else the backend asks the first connection and assumes the others alike (a pool
   *     gives every connection back with its configured isolation)
   */
  default OptionalInt isolation() {
    return OptionalInt.empty();
  }

  /**
   * @param e the failure of an operation on one of this source's connections
   * @return true if everything the operation may have done is undone by that failure, so that it
   *     may run again (on another connection); false by default: after a connection error nobody
   *     knows whether a commit happened (ADR 0007)
   */
  default boolean endedBeforeItsAnswer(SQLException e) {
    return false;
  }

  /**
   * @return whether {@link #borrow} keeps to its deadline by itself, so that an operation may run
   *     on a thread that nothing else can cut short (the caller's, {@link
   *     io.latchkey.spi.CallerWaits}); false by default: a user's data source may wait longer for a
   *     connection (its pool's own timeout), which only the engine's bound then ends
   */
  default boolean keepsDeadline() {
    return false;
  }

  /** Closes what the source owns; a user's data source is left alone. */
  @Override
  void close();

  /**
   * @param dataSource the user's data source, pooled or not
   * @return a source that takes a connection from it per operation and closes it after
   */
  static ConnectionSource of(DataSource dataSource) {
    return of(dataSource, false);
  }

  /**
   * @param dataSource the user's data source, pooled or not
   * @param keepsDeadline whether its user says it hands out a connection (or fails) within the
   *     operation timeout ({@link #keepsDeadline()})
   * @return a source that takes a connection from it per operation and closes it after
   */
  static ConnectionSource of(DataSource dataSource, boolean keepsDeadline) {
    return new ConnectionSource() {
      @Override
      public Connection borrow(long deadlineNanos) throws SQLException {
        return dataSource.getConnection();
      }

      @Override
      public boolean keepsDeadline() {
        return keepsDeadline;
      }

      @Override
      public void giveBack(Connection connection, boolean broken) {
        try {
          connection.close();
        } catch (SQLException ignored) {
          // Closing returns it to the user's pool; a failure there leaves nothing for us to do.
        }
      }

      @Override
      public void close() {}
    };
  }
}
