package io.latchkey.jdbc;

import io.latchkey.spi.Wakeup;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Sends wake-ups from inside the releasing transaction, so that they go out if and only if it
 * commits: by NOTIFY on PostgreSQL ({@link PostgresWakeups}), in the resource's row elsewhere
 * ({@link PolledWakeups}).
 */
@FunctionalInterface
interface WakeupPublisher {
  /**
   * @param connection the transaction's connection
   * @param resourceKey the resource's key ({@link ResourceKeys#resource})
   * @param wakeup whom to wake
   */
  void publish(Connection connection, String resourceKey, Wakeup wakeup) throws SQLException;

  /**
   * Adds the wake-up to the transaction's last writes where that saves a round trip, or sends it at
   * once (the default: the order of the two inside the transaction does not matter).
   *
   * @param writes the writes that end the transaction
   * @param connection the transaction's connection
   * @param resourceKey the resource's key ({@link ResourceKeys#resource})
   * @param wakeup whom to wake
   */
  default void publish(Writes writes, Connection connection, String resourceKey, Wakeup wakeup)
      throws SQLException {
    publish(connection, resourceKey, wakeup);
  }
}
