package io.latchkey.jdbc;

import io.latchkey.spi.ResourceType;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One resource's row, read with its row lock ({@code SELECT ... FOR UPDATE}), which serialises
 * every operation on the resource: a name's fencing counter, a semaphore's count, a leased
 * semaphore's total, a latch's count, and a lock's wait-queue counter and pending hand-off. Also
 * carries the database's time, read once in the same transaction: every deadline the operation
 * judges or writes is by that clock. On PostgreSQL a lock's row may also carry its sole holder
 * ({@link SoleHolder}); it is written back as it is unless the operation takes it out ({@link
 * #takeSole}).
 */
final class ResourceRow {
  final String key;
  final String name;
  final long now;
  long fence;
  @Nullable Long amount;
  long queueSeq;
  @Nullable String wokenOwner;
  long wokenAt;

  /**
   * PostgreSQL: whether the lock may have holder or queue rows ({@code has_rows}); {@link
   * LockRecord} sets it from the rows it loaded and changed.
   */
  boolean hasRows;

  private final boolean hasRowsBefore;
  private @Nullable SoleHolder sole;
  private final @Nullable SoleHolder soleBefore;
  private final @Nullable Long amountBefore;
  private final long fenceBefore;
  private final long queueSeqBefore;
  private final @Nullable String wokenOwnerBefore;
  private final long wokenAtBefore;

  private ResourceRow(
      String key,
      String name,
      long now,
      long fence,
      @Nullable Long amount,
      long queueSeq,
      @Nullable String wokenOwner,
      long wokenAt,
      boolean hasRows,
      @Nullable SoleHolder sole) {
    this.key = key;
    this.name = name;
    this.now = now;
    this.fence = fence;
    this.amount = amount;
    this.queueSeq = queueSeq;
    this.wokenOwner = wokenOwner;
    this.wokenAt = wokenAt;
    this.hasRows = hasRows;
    this.hasRowsBefore = hasRows;
    this.sole = sole;
    this.soleBefore = sole;
    this.fenceBefore = fence;
    this.amountBefore = amount;
    this.queueSeqBefore = queueSeq;
    this.wokenOwnerBefore = wokenOwner;
    this.wokenAtBefore = wokenAt;
  }

  /**
   * Locks the resource's row until the transaction ends, creating it first if asked.
   *
   * @return the row, or null if it does not exist and {@code create} is false
   */
  static @Nullable ResourceRow lock(
      Connection connection, Sql sql, ResourceType type, String name, boolean create)
      throws SQLException {
    String key = ResourceKeys.resource(type, name);
    try (PreparedStatement select = connection.prepareStatement(sql.lockResource)) {
      select.setString(1, key);
      try (ResultSet rs = select.executeQuery()) {
        ResourceRow row = read(rs, key, name, sql);
        if (row != null) {
          return row;
        }
      }
    }
    if (!create) {
      return null;
    }
    // A concurrent transaction inserting the same row makes this one fail on the primary key;
    // Transactions runs it again, and it then finds the row.
    try (PreparedStatement insert = connection.prepareStatement(sql.insertResource)) {
      insert.setString(1, key);
      insert.setString(2, type.name());
      insert.setString(3, name);
      insert.executeUpdate();
    }
    // The column's default: TRUE.
    return new ResourceRow(key, name, sql.now(connection), 0, null, 0, null, 0, true, null);
  }

  /**
   * The row {@link Sql#lockResource} answered, or null if it answered none.
   *
   * @param key the resource's key
   * @param name its name, checked against the stored one
   * @param sql the statements, which say whether the row has the sole holder's columns
   */
  static @Nullable ResourceRow read(ResultSet rs, String key, String name, Sql sql)
      throws SQLException {
    if (!rs.next()) {
      return null;
    }
    String stored = rs.getString(1);
    if (!name.equals(stored)) {
      throw new IllegalStateException(
          "two names share the key " + key + ": '" + name + "' and '" + stored + "'");
    }
    return new ResourceRow(
        key,
        name,
        rs.getLong(7),
        rs.getLong(2),
        nullableLong(rs, 3),
        rs.getLong(4),
        rs.getString(5),
        rs.getLong(6),
        !sql.soleHolders || rs.getBoolean(8),
        sql.soleHolders ? SoleHolder.read(rs, 9) : null);
  }

  /**
   * Takes the lock's sole holder out of the row, to be written as a holder row in the same
   * transaction ({@link LockRecord}); the row's columns are emptied when it is written.
   *
   * @return the sole holder, or null if the row had none
   */
  @Nullable SoleHolder takeSole() {
    SoleHolder taken = sole;
    sole = null;
    return taken;
  }

  /**
   * Takes the name's next fencing token: one more than the last, and at least the database's clock
   * in milliseconds times 1000. The clock floor keeps tokens growing when the counter goes back: a
   * server that lost its last commits (a crash with {@code synchronous_commit=off}, a fail-over to
   * an asynchronous replica) would otherwise hand out a token again. Only a database clock that
   * goes back defeats it (the same rule as Redis, docs/adr/0002-redis-fencing-tokens.md).
   */
  long nextToken() {
    fence = Math.max(fence + 1, Math.multiplyExact(now, 1000L));
    return fence;
  }

  /** Writes the row's fields back, if any changed. */
  void save(Connection connection, Sql sql) throws SQLException {
    Writes writes = sql.writes();
    write(writes, sql);
    writes.run(connection);
  }

  /** Adds the update of the row's fields to {@code writes}, if any changed. */
  void write(Writes writes, Sql sql) {
    boolean changed =
        fence != fenceBefore
            || !java.util.Objects.equals(amount, amountBefore)
            || queueSeq != queueSeqBefore
            || !java.util.Objects.equals(wokenOwner, wokenOwnerBefore)
            || wokenAt != wokenAtBefore
            || (sql.soleHolders && hasRows != hasRowsBefore)
            || !java.util.Objects.equals(sole, soleBefore);
    if (!changed) {
      return;
    }
    List<Object> values =
        new ArrayList<>(
            List.of(
                fence, Writes.nullable(amount), queueSeq, Writes.nullable(wokenOwner), wokenAt));
    if (sql.soleHolders) {
      values.add(hasRows);
      SoleHolder.addColumns(values, sole);
    }
    values.add(key);
    writes.add(sql.updateResource, values.toArray());
  }

  private static @Nullable Long nullableLong(ResultSet rs, int column) throws SQLException {
    long value = rs.getLong(column);
    return rs.wasNull() ? null : value;
  }
}
