package io.latchkey.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Writes to a table of yours that refuse a holder whose lock was taken over: each row keeps the
 * fencing token of the last write it accepted, and a write carries the writer's token ({@link
 * io.latchkey.Lease#fencingToken()}):
 *
 * <pre>{@code
 * UPDATE accounts SET balance = ?, fence = :token WHERE id = :id AND fence < :token
 * }</pre>
 *
 * A holder that was paused past its lease (a GC pause, a frozen VM) and writes after another holder
 * did carries an older token than the row, and its write changes nothing. This is the optimistic
 * version column of old, with the lock's token as the version.
 *
 * <pre>{@code
 * FencedWrites accounts = FencedWrites.on("accounts", "id", "fence");
 * try (Lease lease = lock.acquire(Duration.ofSeconds(3))) {
 *   boolean written =
 *       accounts.update(connection, 42, lease.fencingToken(), Map.of("balance", 100));
 *   if (!written) { ... a newer holder wrote first: do not retry with this lease ... }
 * }
 * }</pre>
 *
 * The fence column must be an integer (BIGINT), start below every token (0), and only ever be set
 * through fenced writes. Table and column names are checked to be plain SQL identifiers; values are
 * bound as parameters.
 */
public final class FencedWrites {
  private static final Pattern IDENTIFIER =
      Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

  private final String table;
  private final String idColumn;
  private final String fenceColumn;

  private FencedWrites(String table, String idColumn, String fenceColumn) {
    this.table = identifier("table", table);
    this.idColumn = identifier("idColumn", idColumn);
    this.fenceColumn = identifier("fenceColumn", fenceColumn);
  }

  /**
   * @param table the table (optionally {@code schema.table})
   * @param idColumn the column that identifies a row
   * @param fenceColumn the BIGINT column holding the token of the last accepted write
   * @return fenced writes on that table
   * @throws IllegalArgumentException if a name is not a plain SQL identifier
   */
  public static FencedWrites on(String table, String idColumn, String fenceColumn) {
    return new FencedWrites(table, idColumn, fenceColumn);
  }

  /**
   * @param columns the columns to set, in order
   * @return the statement: the columns' values, then the token, the id and the token again
   */
  public String updateSql(List<String> columns) {
    if (columns.isEmpty()) {
      throw new IllegalArgumentException("a fenced write sets at least one column");
    }
    StringBuilder sql = new StringBuilder("UPDATE ").append(table).append(" SET ");
    for (String column : columns) {
      sql.append(identifier("column", column)).append(" = ?, ");
    }
    return sql.append(fenceColumn)
        .append(" = ? WHERE ")
        .append(idColumn)
        .append(" = ? AND ")
        .append(fenceColumn)
        .append(" < ?")
        .toString();
  }

  /**
   * Sets columns of one row if the token is newer than the row's fence, and the fence to the token.
   * Runs in the connection's current transaction.
   *
   * @param connection where to write
   * @param id the row's id
   * @param fencingToken the writer's {@link io.latchkey.Lease#fencingToken()}
   * @param values the columns to set and their values
   * @return true if written; false if the row holds a token at least as new (or does not exist)
   * @throws SQLException if the database fails
   */
  public boolean update(Connection connection, Object id, long fencingToken, Map<String, ?> values)
      throws SQLException {
    Objects.requireNonNull(id, "id must not be null");
    Map<String, ?> ordered = new LinkedHashMap<>(values);
    List<String> columns = new ArrayList<>(ordered.keySet());
    try (PreparedStatement update = connection.prepareStatement(updateSql(columns))) {
      int index = 1;
      for (String column : columns) {
        update.setObject(index++, ordered.get(column));
      }
      update.setLong(index++, fencingToken);
      update.setObject(index++, id);
      update.setLong(index, fencingToken);
      return update.executeUpdate() == 1;
    }
  }

  private static String identifier(String what, String name) {
    Objects.requireNonNull(name, () -> what + " must not be null");
    if (!IDENTIFIER.matcher(name).matches()) {
      throw new IllegalArgumentException(
          what + " must be a plain SQL identifier (letters, digits, '_'), was '" + name + "'");
    }
    return name;
  }
}
