package io.latchkey.jdbc;

import java.util.Locale;

/**
 * How the database keeps locks. Chosen with {@link JdbcBackend.Builder#mode} or the URI option
 * {@code latchkey.mode}.
 */
public enum JdbcMode {
  /**
   * A lease table (the default): one row per holder with a deadline by the database's clock, a
   * fencing counter per name and a wait queue; every primitive; holds survive a restart of the
   * database and the loss of a client's connection, and end with their lease.
   */
  TABLE,
  /**
   * Advisory locks on PostgreSQL ({@code pg_try_advisory_lock}, shared ones for read-write locks)
   * or MariaDB/MySQL ({@code GET_LOCK}), held on one pinned connection per client: the database
   * frees them when that connection ends (a crashed client, a killed connection), and the client
   * reports them lost at once. No lease time (a live connection keeps its locks however long the
   * client pauses), no semaphores or latches, no owner tokens from other processes; reentrant, fair
   * and (PostgreSQL) read-write locks, mutexes and the operator's tools. The lease tables still
   * carry owners, hold counts, fencing counters and the wait queue. Not on H2.
   */
  ADVISORY,
  /**
   * Row locks: each held lock is a {@code SELECT ... FOR UPDATE} on a row of its own (by primary
   * key, so InnoDB locks that row only) inside a transaction left open on a connection of its own,
   * taken from a small bounded set ({@link JdbcBackend.Builder#holdConnections}); the database
   * frees the row when that transaction or connection ends, and the client reports that lock lost
   * at once. As advisory mode otherwise: no lease time, no semaphores or latches, no owner tokens
   * from other processes; reentrant, fair and read-write locks, mutexes and the operator's tools,
   * with the lease tables carrying owners, hold counts, fencing counters and the wait queue.
   * PostgreSQL, and MariaDB 10.6 or later or MySQL 8.0 or later (it needs {@code SKIP LOCKED}). Not
   * on H2.
   */
  ROW;

  /**
   * @param text a mode's name, in any case
   * @return the mode
   * @throws IllegalArgumentException naming the modes there are
   */
  public static JdbcMode parse(String text) {
    for (JdbcMode mode : values()) {
      if (mode.name().equalsIgnoreCase(text.trim())) {
        return mode;
      }
    }
    throw new IllegalArgumentException(
        "unknown latchkey-jdbc mode '"
            + text
            + "': the modes are "
            + java.util.Arrays.stream(values())
                .map(m -> m.name().toLowerCase(Locale.ROOT))
                .toList());
  }
}
