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
 * each in one round trip and one transaction, with the decision taken by the database (table and
 * advisory modes; {@link TableLockStore} runs its general path when this one does not apply).
 *
 * <p>The text of each is three statements that pgjdbc sends together: the resource row's lock
 * ({@code SELECT ... FOR UPDATE}); one statement that checks and writes; {@code COMMIT}. The lock
 * is a statement of its own for the reason {@link Sql#lockAndLoad} gives: the next statement's
 * snapshot is taken after the lock was had, so it sees every row that the transaction it waited for
 * wrote.
 *
 * <p>The acquire grants only what the general path's rules would grant without a choice: the lock
 * has no holder row at all (none alive, none past its lease), no queue row (not even one past its
 * deadline) and no pending hand-off. Then the new holder gets the name's next fencing token ({@code
 * GREATEST(fence + 1, now × 1000)}, {@link ResourceRow#nextToken}), one hold in its mode and a
 * deadline of the database's clock plus the lease, and the keeper's hold is taken in the same
 * statement ({@link HoldKeeper.InlineHold#take}: {@code pg_try_advisory_lock} in advisory mode),
 * evaluated last, inside a {@code CASE}, so that it runs only when the rows say the lock is free;
 * the counter advances and the holder row is written only if it answered true. Nothing else is
 * written, as the general path would write nothing else. The release deletes the holder row only if
 * the grant's token matches, the row holds exactly one hold in the mode and none in the other, the
 * holder is alive ({@link HoldKeeper.InlineHold#holderAlive}) and nobody is queued, so that no
 * wake-up is due; the keeper's hold is given back for the deleted row.
 *
 * <p>When either finds its case does not apply, its transaction has committed having written
 * nothing, and the general path runs in a new one: a contended operation pays one round trip more.
 * A failure is the operation's answer (never followed by the general path); if the acquire's
 * statement failed after the keeper may have taken its hold, that hold is given back ({@link
 * HoldKeeper.InlineHold#undoTake}), as the general path gives back a hold whose commit failed.
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
    String lockRow = "SELECT 1 FROM " + r + " WHERE res_key = ? FOR UPDATE; ";
    for (LockMode mode : LockMode.values()) {
      boolean shared = mode == LockMode.SHARED;
      acquire.put(
          mode,
          lockRow
              // OFFSET 0 keeps the subquery apart: the clock is read once, and the CASE (with the
              // keeper's take) is evaluated for the one row of this name only.
              + "WITH g AS (SELECT s.res_key, GREATEST(s.fence + 1, s.now * 1000) AS token, s.now"
              + " FROM (SELECT res_key, fence, woken_owner, "
              + sql.dialect.nowMillis()
              + " AS now FROM "
              + r
              + " WHERE res_key = ? OFFSET 0) s WHERE CASE WHEN s.woken_owner IS NULL"
              + " AND NOT EXISTS (SELECT 1 FROM "
              + h
              + " WHERE res_key = s.res_key) AND NOT EXISTS (SELECT 1 FROM "
              + q
              + " WHERE res_key = s.res_key) THEN "
              + hold.take(mode)
              + " ELSE FALSE END), u AS (UPDATE "
              + r
              + " t SET fence = g.token FROM g WHERE t.res_key = g.res_key) INSERT INTO "
              + h
              + " (res_key, holder_key, holder_id, client_id, shared_holds, exclusive_holds,"
              + " expires_at, token) SELECT g.res_key, ?, ?, ?, "
              + (shared ? "1, 0" : "0, 1")
              + ", g.now + ?, g.token FROM g RETURNING token; COMMIT");
      release.put(
          mode,
          lockRow
              + "WITH d AS (DELETE FROM "
              + h
              + " WHERE res_key = ? AND holder_key = ? AND (CAST(? AS BOOLEAN) OR token = ?) AND "
              + (shared ? "shared_holds = 1 AND exclusive_holds = 0" : "exclusive_holds = 1")
              + (shared ? "" : " AND shared_holds = 0")
              + " AND "
              + hold.holderAlive()
              + " AND NOT EXISTS (SELECT 1 FROM "
              + q
              + " WHERE res_key = ?) RETURNING token) SELECT "
              + hold.give(mode)
              + " FROM d; COMMIT");
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
      text.setString(2, key);
      int index = hold.bindHold(text, 3, key);
      text.setString(index++, ResourceKeys.holder(request.owner()));
      text.setString(index++, request.owner());
      text.setString(index++, clientId);
      text.setLong(index, request.leaseMillis());
      try {
        long token = tokenOf(text);
        return token < 0 ? null : AcquireResult.granted(token, 1);
      } catch (SQLException | RuntimeException e) {
        if (!Transactions.isBroken(e)) {
          try {
            connection.rollback();
            hold.undoTake(connection, key, request.mode());
          } catch (SQLException | RuntimeException alsoFailed) {
            e.addSuppressed(alsoFailed);
          }
        }
        throw e;
      }
    }
  }

  /**
   * Releases a holder's last hold when nobody waits, in a transaction of its own that it commits.
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
      text.setString(index++, key);
      hold.bindHold(text, index, key);
      text.execute();
      skipLockRow(text);
      try (ResultSet rs = text.getResultSet()) {
        return rs.next();
      }
    }
  }

  /** The token the acquire's text answered, or -1 if it wrote nothing. */
  private static long tokenOf(PreparedStatement text) throws SQLException {
    text.execute();
    skipLockRow(text);
    try (ResultSet rs = text.getResultSet()) {
      return rs.next() ? rs.getLong(1) : -1;
    }
  }

  /** Moves from the row lock's result to the next statement's. */
  private static void skipLockRow(PreparedStatement text) throws SQLException {
    text.getResultSet().close();
    if (!text.getMoreResults()) {
      throw new IllegalStateException("the second statement of a text answered no rows");
    }
  }
}
