package io.latchkey.jdbc;

import io.latchkey.LockMode;
import io.latchkey.spi.GrantRef;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Collection;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What keeps a lock's holds alive besides its holder rows, consulted by {@link TableLockStore}
 * inside the transaction that holds the lock's resource row. In table mode nothing does: a holder
 * lives until its lease (the row's deadline) runs out. In advisory mode ({@link AdvisoryHolds})
 * each holder also holds a database advisory lock on the connection of its client, and lives
 * exactly as long as that lock. In row mode ({@link RowHolds}) each holder has a transaction of its
 * own that locks a row, and lives exactly as long as that transaction.
 */
interface HoldKeeper {
  /** Table mode: holders end with their lease, and nothing else is held. */
  HoldKeeper LEASES =
      new HoldKeeper() {
        @Override
        public void purge(Connection connection, LockRecord lock) {
          lock.purge();
        }

        @Override
        public boolean take(
            Connection connection, LockRecord lock, LockRecord.Holder holder, LockMode mode) {
          return true;
        }

        @Override
        public void give(
            Connection connection, LockRecord lock, LockRecord.Holder holder, LockMode mode) {}

        @Override
        public void evict(Connection connection, LockRecord lock, LockRecord.Holder holder) {}

        @Override
        public InlineHold inlineHold(SqlDialect dialect) {
          return new InlineHold() {
            @Override
            public String take(LockMode mode) {
              return "TRUE";
            }

            @Override
            public String give(LockMode mode) {
              return "TRUE";
            }

            @Override
            public String soleHolderAlive() {
              // A holder whose lease ran out is gone (the general path's purge would drop it).
              return "sole_expires_at > " + dialect.nowMillis();
            }
          };
        }
      };

  /**
   * Drops the holders and queue places that are gone, before the rules are applied.
   *
   * @param connection the operation's connection
   * @param lock the lock's record, loaded
   */
  void purge(Connection connection, LockRecord lock) throws SQLException;

  /**
   * Called when one of this client's owners gets its first hold in {@code mode} (by the rows).
   *
   * @param holder the owner's holder, with its token (its holds not yet counted)
   * @return false if the hold cannot be had after all (the lock is refused, nothing is written)
   */
  boolean take(Connection connection, LockRecord lock, LockRecord.Holder holder, LockMode mode)
      throws SQLException;

  /**
   * Called when a holder gives up its last hold in {@code mode}: one of this client's owners, or (a
   * release by an owner token from another process) another client's.
   */
  void give(Connection connection, LockRecord lock, LockRecord.Holder holder, LockMode mode)
      throws SQLException;

  /**
   * Called when an operator removes a holder (evict, force-release) before its row is deleted.
   *
   * @param holder the holder, of any client
   */
  void evict(Connection connection, LockRecord lock, LockRecord.Holder holder) throws SQLException;

  /**
   * How this keeper takes and gives back a hold inside one statement, for {@link UncontendedPath}'s
   * one-round-trip first hold and last release on PostgreSQL; null where it cannot (the general
   * path then runs alone).
   *
   * @param dialect the database
   */
  default @Nullable InlineHold inlineHold(SqlDialect dialect) {
    return null;
  }

  /**
   * A keeper's hold as SQL: expressions that {@link UncontendedPath} puts into its statements, and
   * what binds their parameters. The store guarantees that {@link #take} runs only when the lock
   * has no holder at all, and {@link #give} only for the sole holder ({@link SoleHolder}) whose
   * hold it removes.
   */
  interface InlineHold {
    /**
     * @return a boolean SQL expression that takes the hold in {@code mode} (true if taken)
     */
    String take(LockMode mode);

    /**
     * @return an SQL expression that gives back the hold in {@code mode}, evaluated once for the
     *     deleted holder row
     */
    String give(LockMode mode);

    /**
     * @return an SQL condition on the sole holder's columns of a resource row (unqualified) that
     *     holds while the sole holder is alive and may be released by this client
     */
    String soleHolderAlive();

    /**
     * Checks what must be checked before {@link #take} may run for the lock (its key), once per
     * statement that takes or gives.
     */
    default void prepare(Connection connection, String resourceKey, String name)
        throws SQLException {}

    /**
     * Binds the parameters of {@link #take} or {@link #give}.
     *
     * @return the next parameter index
     */
    default int bindHold(PreparedStatement statement, int index, String resourceKey)
        throws SQLException {
      return index;
    }

    /**
     * Binds the parameters of {@link #soleHolderAlive}.
     *
     * @return the next parameter index
     */
    default int bindAlive(PreparedStatement statement, int index) throws SQLException {
      return index;
    }

    /**
     * Called after a statement that may have run {@link #take} failed and its transaction rolled
     * back: gives back what {@link #take} may have held, if it did.
     */
    default void undoTake(Connection connection, String resourceKey, LockMode mode)
        throws SQLException {}
  }

  /**
   * Called once an acquire's transaction is over, committed or not: what {@link #take} held for it
   * is kept if the acquire answered with a grant, and given back if it failed (whatever its commit
   * did: a grant the engine never heard of must not stay held).
   *
   * @param resourceKey the lock's key
   * @param owner the owner that asked
   * @param granted whether the acquire answered with a grant
   */
  default void settled(String resourceKey, String owner, boolean granted) {}

  /**
   * @param grants grants of this client that the engine renews
   * @return those whose holds this client knows are gone, whatever the rows say
   */
  default Set<GrantRef> gone(Collection<GrantRef> grants) {
    return Set.of();
  }
}
