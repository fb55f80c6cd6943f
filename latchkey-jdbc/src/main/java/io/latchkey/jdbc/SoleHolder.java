package io.latchkey.jdbc;

import io.latchkey.LockMode;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A lock's sole holder, kept in the lock's resource row instead of a holder row (PostgreSQL only;
 * docs/adr/0005-session-and-connection-bound-backends.md, amendment "the sole holder and
 * has_rows"). {@link UncontendedPath} writes it when it grants a first hold on a lock that has no
 * holder row, no queue row and no sole holder, so that the grant is one single-row {@code UPDATE};
 * its release empties the columns the same way. Every other operation on the lock locks the
 * resource row first, and {@link LockRecord} then moves the sole holder into a holder row in the
 * same transaction, so the general path's rules never see the columns. The invariant the
 * uncontended statements rely on: while a sole holder is set, the lock has no holder row and no
 * queue row. Renewal ({@link TableRenewal}) extends it in place; the operator's listings ({@link
 * Sql#listHolders}) read it beside the holder rows.
 *
 * @param holderId the owner
 * @param clientId the client that took the hold
 * @param mode the hold's mode (one hold)
 * @param expiresAt the lease's end, milliseconds by the database's clock
 * @param token the grant's fencing token
 */
record SoleHolder(String holderId, String clientId, LockMode mode, long expiresAt, long token) {
  /** The columns {@link #read} reads, in its order. */
  static final String COLUMNS =
      "sole_holder_id, sole_client_id, sole_mode, sole_expires_at, sole_token";

  /** An {@code UPDATE}'s assignments of every column, bound by {@link #addColumns}. */
  static final String ASSIGNMENTS =
      "sole_holder_key = ?, sole_holder_id = ?, sole_client_id = ?, sole_mode = ?,"
          + " sole_expires_at = ?, sole_token = ?";

  /** An {@code UPDATE}'s assignments that empty the columns. */
  static final String CLEARED =
      "sole_holder_key = NULL, sole_holder_id = NULL, sole_client_id = NULL, sole_mode = NULL,"
          + " sole_expires_at = NULL, sole_token = NULL";

  /** The columns the schema check reads, which a table made by an earlier latchkey lacks. */
  static final String ALL_COLUMNS = "sole_holder_key, " + COLUMNS;

  /**
   * @param rs a row positioned on the resource row
   * @param first the index of the first of {@link #COLUMNS}
   * @return the sole holder, or null if the columns are empty
   */
  static @Nullable SoleHolder read(ResultSet rs, int first) throws SQLException {
    String holderId = rs.getString(first);
    if (holderId == null) {
      return null;
    }
    return new SoleHolder(
        holderId,
        rs.getString(first + 1),
        LockRecord.modeOf(rs.getString(first + 2)),
        rs.getLong(first + 3),
        rs.getLong(first + 4));
  }

  /** Adds the values of {@link #ASSIGNMENTS} for {@code sole} (all NULL when it is null). */
  static void addColumns(List<Object> values, @Nullable SoleHolder sole) {
    if (sole == null) {
      values.add(Writes.nullable((String) null));
      values.add(Writes.nullable((String) null));
      values.add(Writes.nullable((String) null));
      values.add(Writes.nullable((String) null));
      values.add(Writes.nullable((Long) null));
      values.add(Writes.nullable((Long) null));
      return;
    }
    values.add(ResourceKeys.holder(sole.holderId));
    values.add(sole.holderId);
    values.add(sole.clientId);
    values.add(LockRecord.codeOf(sole.mode));
    values.add(sole.expiresAt);
    values.add(sole.token);
  }
}
