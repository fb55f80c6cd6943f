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
 * SoleHolder}, written into the resource row's own columns with the next fencing token, so a first
 * hold writes no holder row and its release deletes none.
 *
 * <p><b>Why the resource row alone may decide.</b> Two invariants of the general path, which locks
 * the resource row before it reads or writes any other row of the lock ({@link LockRecord}): every
 * transaction that adds a holder or queue row sets the row's {@code has_rows} in the same
 * transaction, and {@code has_rows} is written false only by a transaction that loaded the lock's
 * rows under that lock and left none ({@link LockRecord#writes}); and every such transaction first
 * moves a sole holder into a holder row, emptying its columns. So the row says all: no pending
 * hand-off ({@code woken_owner}), no sole holder and {@code has_rows} false mean the lock is free;
 * a sole holder set means it has no holder and no queue row besides. An {@code UPDATE} whose
 * conditions are on the row itself is checked again by PostgreSQL on the newest version of a row
 * changed after its snapshot (read committed), so a transaction that committed meanwhile is never
 * missed.
 *
 * <p>The acquire grants only what the general path's rules would grant without a choice: the lock
 * is free as above. Then the new holder gets the name's next fencing token ({@code GREATEST(fence +
 * 1, now × 1000)} of the newest version, {@link ResourceRow#nextToken}), one hold in its mode and a
 * deadline of the database's clock plus the lease. In table mode that is one plain {@code UPDATE}.
 * In advisory mode the keeper's hold ({@link HoldKeeper.InlineHold#take}: {@code
 * pg_try_advisory_lock}) must be taken once and only when the lock is free, so it is decided in a
 * subquery of its own from the snapshot, evaluated last inside a {@code CASE}, and the row is
 * written only if it is still the version that snapshot saw (its {@code xmin}); an acquire whose
 * keeper took its hold but whose row had changed gives that hold back ({@link
 * HoldKeeper.InlineHold#undoTake}) before the general path runs. The release empties the sole
 * holder's columns only if they name the grant's holder and token and the mode released, and the
 * holder is alive ({@link HoldKeeper.InlineHold#soleHolderAlive}); nobody can be queued then, so no
 * wake-up is due. The keeper's hold is given back for it. A lock whose holder is not sole (a second
 * hold, a re-entry, a waiter) is the general path's.
 *
 * <p>When either finds its case does not apply, it has written nothing, and the general path runs
 * in a new transaction: a contended operation pays one round trip more. A failure is the
 * operation's answer (never followed by the general path); if the acquire's statement failed after
 * the keeper may have taken its hold, that hold is given back as well, as the general path gives
 * back a hold whose commit failed.
 */
final class UncontendedPath {
  private final HoldKeeper.InlineHold hold;
  private final boolean rowsOnly;
  private final Map<LockMode, String> acquire = new EnumMap<>(LockMode.class);
  private final Map<LockMode, String> release = new EnumMap<>(LockMode.class);

  /**
   * @param rowsOnly whether a hold is the rows alone (table mode): the acquire is then one plain
   *     {@code UPDATE} whose conditions are all on the resource row
   */
  private UncontendedPath(Sql sql, HoldKeeper.InlineHold hold, boolean rowsOnly) {
    this.hold = hold;
    this.rowsOnly = rowsOnly;
    String r = sql.schema.resources();
    String now = sql.dialect.nowMillis();
    for (LockMode mode : LockMode.values()) {
      String code = "'" + LockRecord.codeOf(mode) + "'";
      String sole =
          " sole_holder_key = ?, sole_holder_id = ?, sole_client_id = ?, sole_mode = " + code;
      acquire.put(
          mode,
          rowsOnly
              // The clock is read once (OFFSET 0 keeps its subquery apart); the conditions are
              // checked again on the newest version of a row changed meanwhile, and the token is
              // taken from that version's counter.
              ? "UPDATE "
                  + r
                  + " t SET fence = GREATEST(t.fence + 1, c.now * 1000),"
                  + sole
                  + ", sole_expires_at = c.now + ?, sole_token = GREATEST(t.fence + 1, c.now * 1000)"
                  + " FROM (SELECT "
                  + now
                  + " AS now OFFSET 0) c WHERE t.res_key = ? AND "
                  + free("t")
                  + " RETURNING t.sole_token"
              // The keeper's take must run once, and only when the row says free: it is decided
              // in a subquery of its own (OFFSET 0), whose CASE takes it last, from the
              // statement's snapshot; the row is written only if it is still the version that
              // snapshot saw (its xmin), so that its counter is the one the token was taken from.
              : "WITH g AS (SELECT s.res_key, s.seen, GREATEST(s.fence + 1, s.now * 1000) AS token,"
                  + " s.now FROM (SELECT res_key, xmin AS seen, fence, woken_owner,"
                  + " sole_holder_key, has_rows, "
                  + now
                  + " AS now FROM "
                  + r
                  + " WHERE res_key = ? OFFSET 0) s WHERE CASE WHEN "
                  + free("s")
                  + " THEN "
                  + hold.take(mode)
                  + " ELSE FALSE END), u AS (UPDATE "
                  + r
                  + " t SET fence = g.token,"
                  + sole
                  + ", sole_expires_at = g.now + ?, sole_token = g.token FROM g"
                  + " WHERE t.res_key = g.res_key AND t.xmin = g.seen RETURNING g.token)"
                  + " SELECT (SELECT token FROM u) FROM g");
      String emptySole =
          "UPDATE "
              + r
              + " SET "
              + SoleHolder.CLEARED
              + " WHERE res_key = ? AND sole_holder_key = ? AND (CAST(? AS BOOLEAN)"
              + " OR sole_token = ?) AND sole_mode = "
              + code
              + " AND "
              + hold.soleHolderAlive();
      release.put(
          mode,
          rowsOnly
              ? emptySole + " RETURNING TRUE"
              : "WITH u AS (" + emptySole + " RETURNING 1) SELECT " + hold.give(mode) + " FROM u");
    }
  }

  /**
   * The condition on a lock's resource row (under {@code alias}) that it is free for a sole holder:
   * no pending hand-off, no sole holder, no holder or queue row.
   */
  private static String free(String alias) {
    return alias
        + ".woken_owner IS NULL AND "
        + alias
        + ".sole_holder_key IS NULL AND NOT "
        + alias
        + ".has_rows";
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
    return hold == null ? null : new UncontendedPath(sql, hold, keeper == HoldKeeper.LEASES);
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
      int index = 1;
      if (!rowsOnly) {
        text.setString(index++, key);
        index = hold.bindHold(text, index, key);
      }
      text.setString(index++, ResourceKeys.holder(request.owner()));
      text.setString(index++, request.owner());
      text.setString(index++, clientId);
      text.setLong(index++, request.leaseMillis());
      if (rowsOnly) {
        text.setString(index, key);
      }
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
      text.setString(2, ResourceKeys.holder(grant.holderId()));
      text.setBoolean(3, grant.fencingToken() == GrantRef.ANY_TOKEN);
      text.setLong(4, grant.fencingToken());
      int index = hold.bindAlive(text, 5);
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
