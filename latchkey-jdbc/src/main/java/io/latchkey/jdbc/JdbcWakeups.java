package io.latchkey.jdbc;

import io.latchkey.spi.WakeupBus;
import java.util.concurrent.ScheduledExecutorService;
import org.jspecify.annotations.Nullable;

/**
 * The wake-up channel of a JDBC backend, in either mode: PostgreSQL's LISTEN/NOTIFY ({@link
 * PostgresWakeups}), or the wake-up rows that waiters poll ({@link PolledWakeups}) elsewhere.
 */
final class JdbcWakeups implements AutoCloseable {
  private final @Nullable PostgresWakeups pushed;
  private final @Nullable PolledWakeups polled;

  /**
   * @param settings the backend's database and table prefix
   * @param listenerConnections opens PostgreSQL's listening connection
   * @param polling the transactions that poll the rows (not PostgreSQL)
   * @param sql the statements of the tables
   * @param scheduler times the polls
   */
  JdbcWakeups(
      JdbcBackend.Settings settings,
      PostgresWakeups.Opener listenerConnections,
      Transactions polling,
      Sql sql,
      ScheduledExecutorService scheduler) {
    if (settings.dialect() == SqlDialect.POSTGRESQL) {
      this.pushed = new PostgresWakeups(settings.tablePrefix(), listenerConnections);
      this.polled = null;
    } else {
      this.pushed = null;
      this.polled = new PolledWakeups(polling, sql, scheduler);
    }
  }

  /** Whether the database pushes wake-ups across processes. */
  boolean pushes() {
    return pushed != null;
  }

  /** Where releasing transactions record their wake-ups. */
  WakeupPublisher publisher() {
    return pushed != null ? pushed : requirePolled();
  }

  /** Where waiters subscribe. */
  WakeupBus bus() {
    return pushed != null ? pushed : requirePolled();
  }

  private PolledWakeups requirePolled() {
    if (polled == null) {
      throw new IllegalStateException("no wake-up channel");
    }
    return polled;
  }

  @Override
  public void close() {
    if (pushed != null) {
      pushed.close();
    }
    if (polled != null) {
      polled.close();
    }
  }
}
