package io.latchkey.jdbc;

import io.latchkey.spi.FenceStore;
import io.latchkey.spi.ResourceType;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.CompletionStage;

/**
 * The growing numbers a quorum builds its fencing on (docs/adr/0009-quorum-fencing.md), in the
 * tables of every mode: a lock's fencing counter is the {@code fence} column of its resource row,
 * the one {@link ResourceRow#nextToken} counts up in table, advisory and row mode alike; the epoch
 * record is the one row of the epoch table, which has no expiry and so lives exactly as long as the
 * data.
 *
 * <p>Each call is one short transaction on the backend's pool ({@link Transactions}). A raise locks
 * the resource row ({@code SELECT ... FOR UPDATE}), as every acquire does, so it is ordered with
 * them: the next acquire finds the raised counter and, by {@link ResourceRow#nextToken}, hands out
 * more than it, and never less than the database's clock times 1000. A raise never lowers the
 * counter, and a read ({@code atLeast} 0) creates no row. The epoch call locks the epoch row when
 * it may write it; a read takes no lock, so the reads that follow every quorum acquire do not queue
 * behind each other. The quarantine deadline is written and judged by the database's clock, read in
 * the same statement as the row.
 */
final class TableFenceStore implements FenceStore {
  /** The id of the epoch table's one row. */
  private static final int EPOCH_ROW = 1;

  private final Transactions transactions;
  private final Sql sql;
  private final String readEpoch;
  private final String lockEpoch;
  private final String insertEpoch;
  private final String updateEpoch;

  TableFenceStore(Transactions transactions, Sql sql) {
    this.transactions = transactions;
    this.sql = sql;
    String table = sql.schema.epoch();
    this.readEpoch =
        "SELECT epoch_value, quarantine_until, "
            + sql.dialect.nowMillis()
            + " FROM "
            + table
            + " WHERE id = "
            + EPOCH_ROW;
    this.lockEpoch = readEpoch + " FOR UPDATE";
    this.insertEpoch =
        "INSERT INTO "
            + table
            + " (id, epoch_value, quarantine_until) VALUES ("
            + EPOCH_ROW
            + ", ?, ?)";
    this.updateEpoch = "UPDATE " + table + " SET epoch_value = ? WHERE id = " + EPOCH_ROW;
  }

  @Override
  public CompletionStage<Long> raiseLockFence(String name, long atLeast) {
    requireNotNegative("atLeast", atLeast);
    return transactions.submit(
        "raising the fencing counter of lock '" + name + "'",
        connection -> {
          ResourceRow row = ResourceRow.lock(connection, sql, ResourceType.LOCK, name, atLeast > 0);
          if (row == null) {
            return 0L;
          }
          if (atLeast > row.fence) {
            row.fence = atLeast;
            row.save(connection, sql);
          }
          return row.fence;
        });
  }

  @Override
  public CompletionStage<Epoch> epoch(long atLeast, long quarantineMillis) {
    requireNotNegative("atLeast", atLeast);
    requireNotNegative("quarantineMillis", quarantineMillis);
    return transactions.submit(
        "reading the epoch record", connection -> epoch(connection, atLeast, quarantineMillis));
  }

  private Epoch epoch(Connection connection, long atLeast, long quarantineMillis)
      throws SQLException {
    boolean writes = atLeast > 0;
    long value;
    long quarantineUntil;
    long now;
    try (PreparedStatement select = connection.prepareStatement(writes ? lockEpoch : readEpoch);
        ResultSet rs = select.executeQuery()) {
      if (rs.next()) {
        value = rs.getLong(1);
        quarantineUntil = rs.getLong(2);
        now = rs.getLong(3);
      } else {
        value = 0;
        quarantineUntil = 0;
        now = 0;
      }
    }
    if (value == 0 && writes) {
      // No record: the data is new. A concurrent transaction inserting it first makes this one fail
      // on the primary key; Transactions runs it again, and it then finds the record.
      now = sql.now(connection);
      quarantineUntil = quarantineMillis > 0 ? Math.addExact(now, quarantineMillis) : 0;
      try (PreparedStatement insert = connection.prepareStatement(insertEpoch)) {
        insert.setLong(1, atLeast);
        insert.setLong(2, quarantineUntil);
        insert.executeUpdate();
      }
      value = atLeast;
    } else if (atLeast > value) {
      try (PreparedStatement update = connection.prepareStatement(updateEpoch)) {
        update.setLong(1, atLeast);
        update.executeUpdate();
      }
      value = atLeast;
    }
    return new Epoch(value, Math.max(0, quarantineUntil - now));
  }

  private static void requireNotNegative(String what, long value) {
    if (value < 0) {
      throw new IllegalArgumentException(what + " must not be negative, was " + value);
    }
  }
}
