package io.latchkey.jdbc;

import io.latchkey.LockMode;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.ResourceType;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.EnumMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * PostgreSQL: a lock's first hold on a free lock, and the last release of a lock nobody waits for,
 * each one statement that updates one row, the lock's resource row, in a transaction of its own
 * (table and advisory modes; {@link TableLockStore} runs its general path when this one does not
 * apply). The statement runs with autocommit on: the server's implicit transaction, no {@code
 * BEGIN} or {@code COMMIT} sent, one round trip. The hold it grants is the lock's {@link
 * SoleHolder}, written into the resource row's own columns (the fencing counter is advanced in the
 * same row), so a first hold writes no holder row and its release deletes none.
 *
 * <p><b>Why one statement may decide.</b> The general path locks the resource row first and reads
 * the holder and queue rows in a second statement, because a statement reads from a snapshot taken
 * when it starts, before any lock it then waits for. This path reads the rows from its snapshot and
 * then writes the resource row only if that row is still the version the snapshot saw (its {@code
 * xmin}, the transaction that wrote it): PostgreSQL checks an {@code UPDATE}'s conditions again on
 * the newest version when the row changed after the snapshot (read committed), and the system
 * column {@code xmin} then differs. That check covers the holder and queue rows too, because every
 * transaction that adds a row the decision depends on also writes the resource row, under its row
 * lock, in the same transaction: a new holder takes the name's next fencing token ({@code fence}),
 * a new queue place the next arrival number ({@code queue_seq}), a pending hand-off sets {@code
 * woken_owner}, and a sole holder moved into a holder row empties the sole holder's columns (the
 * general path's {@link LockRecord#writes}); deletions only make a lock freer. So if the resource
 * row is the snapshot's version when this statement holds its row lock, no transaction added such a
 * row after the snapshot, and the snapshot's answer is the answer. If the row changed, nothing is
 * written and the general path decides.
 *
 * <p>The acquire grants only what the general path's rules would grant without a choice: the lock
 * has no sole holder, no holder row at all (none alive, none past its lease), no queue row (not
 * even one past its deadline) and no pending hand-off. Then the new holder gets the name's next
 * fencing token ({@code GREATEST(fence + 1, now × 1000)}, {@link ResourceRow#nextToken}), one hold
 * in its mode and a deadline of the database's clock plus the lease, and the keeper's hold is taken
 * in the same statement ({@link HoldKeeper.InlineHold#take}: {@code pg_try_advisory_lock} in
 * advisory mode), evaluated last, inside a {@code CASE}, so that it runs only when the rows say the
 * lock is free; the row is written only if it answered true and the row had not changed. The
 * release empties the sole holder's columns only if they name the grant's holder and token and the
 * mode released, the holder is alive ({@link HoldKeeper.InlineHold#soleHolderAlive}), nobody is
 * queued (so that no wake-up is due) and the row had not changed; the keeper's hold is given back
 * for it. A lock whose holder is not sole (a second hold, a re-entry, a waiter) is the general
 * path's, which moves the sole holder into a holder row first.
 *
 * <p>When either finds its case does not apply, it has written nothing, and the general path runs
 * in a new transaction: a contended operation pays one round trip more. An acquire whose keeper
 * took its hold but whose resource row had changed gives that hold back ({@link
 * HoldKeeper.InlineHold#undoTake}) before the general path runs. A failure is the operation's
 * answer (never followed by the general path); if the acquire's statement failed after the keeper
 * may have taken its hold, that hold is given back as well, as the general path gives back a hold
 * whose commit failed.
 */
final class UncontendedPath {
  private final HoldKeeper.InlineHold hold;
  private final Map<LockMode, String> acquire = new EnumMap<>(LockMode.class);
  private final Map<LockMode, String> release = new EnumMap<>(LockMode.class);

  private UncontendedPath(Sql sql, HoldKeeper.InlineHold hold) {
    this.hold = hold;
    TableSchema schema = sql.schema;
    String r = schema.resources();
    String h = schema.holders();
    String q = schema.queue();
    for (LockMode mode : LockMode.values()) {
      String code = "'" + LockRecord.codeOf(mode) + "'";
      acquire.put(
          mode,
          // OFFSET 0 keeps the subquery apart: the clock is read once, and the CASE (with the
          // keeper's take) is evaluated for the one row of this name only.
          "WITH g AS (SELECT s.res_key, s.seen, GREATEST(s.fence + 1, s.now * 1000) AS token,"
              + " s.now FROM (SELECT res_key, xmin AS seen, fence, woken_owner, sole_holder_key, "
              + sql.dialect.nowMillis()
              + " AS now FROM "
              + r
              + " WHERE res_key = ? OFFSET 0) s WHERE CASE WHEN s.woken_owner IS NULL"
              + " AND s.sole_holder_key IS NULL AND NOT EXISTS (SELECT 1 FROM "
              + h
              + " WHERE res_key = s.res_key) AND NOT EXISTS (SELECT 1 FROM "
              + q
              + " WHERE res_key = s.res_key) THEN "
              + hold.take(mode)
              + " ELSE FALSE END), u AS (UPDATE "
              + r
              + " t SET fence = g.token, sole_holder_key = ?, sole_holder_id = ?,"
              + " sole_client_id = ?, sole_mode = "
              + code
              + ", sole_expires_at = g.now + ?, sole_token = g.token FROM g"
              + " WHERE t.res_key = g.res_key AND t.xmin = g.seen RETURNING g.token)"
              + " SELECT (SELECT token FROM u) FROM g");
      release.put(
          mode,
          "WITH u AS (UPDATE "
              + r
              + " t SET "
              + SoleHolder.CLEARED
              + " WHERE t.res_key = ? AND t.xmin = (SELECT xmin FROM "
              + r
              + " WHERE res_key = ?) AND t.sole_holder_key = ? AND (CAST(? AS BOOLEAN)"
              + " OR t.sole_token = ?) AND t.sole_mode = "
              + code
              + " AND "
              + hold.soleHolderAlive()
              + " AND NOT EXISTS (SELECT 1 FROM "
              + q
              + " WHERE res_key = t.res_key) RETURNING 1) SELECT "
              + hold.give(mode)
              + " FROM u");
    }
  }

  /**
   * @return the path, or null where there is none: not PostgreSQL (the texts are PostgreSQL's SQL:
   *     data-modifying {@code WITH}, {@code RETURNING}), or a keeper whose hold cannot be taken
   *     inside a statement (row mode)
   */
  static @Nullable UncontendedPath of(Sql sql, HoldKeeper keeper) {
    if (sql.dialect != SqlDialect.POSTGRESQL) {
      return null;
    }
    HoldKeeper.InlineHold hold = keeper.inlineHold(sql.dialect);
    return hold == null ? null : new UncontendedPath(sql, hold);
  }

  /**
   * Grants a free lock's first hold, in a transaction of its own that it commits.
   *
   * @param connection the operation's connection, with no transaction open
   * @param request the request
   * @param clientId this client
   * @return the grant, or null if the lock was not free (nothing was written: decide the general
   *     way)
   */
  @Nullable AcquireResult acquire(Connection connection, LockRequest request, String clientId)
      throws SQLException {
    String key = ResourceKeys.resource(ResourceType.LOCK, request.name());
    hold.prepare(connection, key, request.name());
    try (PreparedStatement text = connection.prepareStatement(acquire.get(request.mode()))) {
      text.setString(1, key);
      int index = hold.bindHold(text, 2, key);
      text.setString(index++, ResourceKeys.holder(request.owner()));
      text.setString(index++, request.owner());
      text.setString(index++, clientId);
      text.setLong(index, request.leaseMillis());
      long token;
      try {
        token = runAlone(connection, () -> tokenOf(text));
      } catch (SQLException | RuntimeException e) {
        if (!Transactions.isBroken(e)) {
          try {
            hold.undoTake(connection, key, request.mode());
          } catch (SQLException | RuntimeException alsoFailed) {
            e.addSuppressed(alsoFailed);
          }
        }
        throw e;
      }
      if (token == NOT_FREE) {
        return null;
      }
      if (token == CHANGED) {
        // The rows said free and the keeper took its hold, but the resource row had changed.
        hold.undoTake(connection, key, request.mode());
        return null;
      }
      return AcquireResult.granted(token, 1);
    }
  }

  /**
   * Releases a sole holder's hold when nobody waits, in a transaction of its own.
   *
   * @param connection the operation's connection, with no transaction open
   * @param grant the grant
   * @param mode the mode released
   * @return true if released; false if nothing was written (decide the general way)
   */
  boolean release(Connection connection, GrantRef grant, LockMode mode) throws SQLException {
    String key = ResourceKeys.resource(ResourceType.LOCK, grant.name());
    hold.prepare(connection, key, grant.name());
    try (PreparedStatement text = connection.prepareStatement(release.get(mode))) {
      text.setString(1, key);
      text.setString(2, key);
      text.setString(3, ResourceKeys.holder(grant.holderId()));
      text.setBoolean(4, grant.fencingToken() == GrantRef.ANY_TOKEN);
      text.setLong(5, grant.fencingToken());
      int index = hold.bindAlive(text, 6);
      hold.bindHold(text, index, key);
      return runAlone(
          connection,
          () -> {
            try (ResultSet rs = text.executeQuery()) {
              return rs.next();
            }
          });
    }
  }

  /** A statement's work, for {@link #runAlone}. */
  private interface Call<T> {
    T run() throws SQLException;
  }

  /**
   * Runs one statement in the server's implicit transaction (autocommit), then turns autocommit off
   * again, as {@link Transactions} keeps the connection. pgjdbc sends nothing for either switch
   * while no transaction is open. A failure of the statement is the answer, even if the connection
   * it ended refuses the switch back.
   */
  private static <T> T runAlone(Connection connection, Call<T> statement) throws SQLException {
    connection.setAutoCommit(true);
    T result;
    try {
      result = statement.run();
    } catch (SQLException | RuntimeException e) {
      try {
        connection.setAutoCommit(false);
      } catch (SQLException alsoFailed) {
        e.addSuppressed(alsoFailed);
      }
      throw e;
    }
    connection.setAutoCommit(false);
    return result;
  }

  /** {@link #tokenOf}: the rows said the lock is not free; nothing was taken or written. */
  private static final long NOT_FREE = -2;

  /** {@link #tokenOf}: the keeper took its hold, but the resource row had changed. */
  private static final long CHANGED = -1;

  /** The token the acquire's statement answered, or {@link #NOT_FREE} or {@link #CHANGED}. */
  private static long tokenOf(PreparedStatement text) throws SQLException {
    try (ResultSet rs = text.executeQuery()) {
      if (!rs.next()) {
        return NOT_FREE;
      }
      long token = rs.getLong(1);
      return rs.wasNull() ? CHANGED : token;
    }
  }
}
