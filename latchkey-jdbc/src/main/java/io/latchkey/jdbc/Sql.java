package io.latchkey.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.jspecify.annotations.Nullable;

/**
 * The statements of table mode for one schema (table prefix) and dialect. Names, owners and ids are
 * always bound as parameters; only table names and the dialect's clock expression are part of the
 * text.
 */
final class Sql {
  final SqlDialect dialect;

  /**
   * Whether the driver sends several statements in one text, each answered in order, in one round
   * trip: always on PostgreSQL, on MariaDB/MySQL where the connection allows it ({@link
   * #multiStatementsAllowed}), never on H2.
   */
  final boolean multiStatements;

  /**
   * Whether a lock's resource row carries its sole holder ({@link SoleHolder}) and whether it has
   * rows ({@code has_rows}, {@link ResourceRow#hasRows}): on PostgreSQL, where {@link
   * UncontendedPath} reads and writes them.
   */
  final boolean soleHolders;

  final String now;
  final String lockResource;

  /**
   * {@link #lockResource} and then one read of the holder and queue rows, in one text that the
   * driver sends in one round trip; null where texts of several statements are not sent ({@link
   * #multiStatements}). The read sees the rows as of after the row lock: each statement of the text
   * takes its own snapshot when it starts, after the one before it ended (READ COMMITTED). One
   * statement that also locked would not: its snapshot is taken before it waits for the lock, and a
   * transaction it waited for would be missed. The read's rows are the holders (first column 'H',
   * by token) and then the queue ('Q', by arrival).
   */
  final @Nullable String lockAndLoad;

  final String insertResource;
  final String updateResource;
  final String selectResource;
  final String selectHolders;
  final String insertHolder;
  final String updateHolder;
  final String deleteHolder;
  final String selectQueue;
  final String insertQueue;
  final String updateQueue;
  final String deleteQueue;
  final String listHolders;
  final String countQueues;
  final String selectClients;
  final String updateClient;
  final String insertClient;
  final String deleteClient;
  final String holdersOfResource;
  final String deleteExpiredHolders;
  final String holderToken;
  final String recordWakeup;
  private final String resourcesTable;
  private final String holdersTable;
  final TableSchema schema;

  /**
   * @param schema the tables
   * @param dialect the database
   * @param multiStatements whether the connections send texts of several statements ({@link
   *     #multiStatementsAllowed}); ignored on H2
   */
  Sql(TableSchema schema, SqlDialect dialect, boolean multiStatements) {
    this.schema = schema;
    this.dialect = dialect;
    this.multiStatements = multiStatements && dialect != SqlDialect.H2;
    String r = schema.resources();
    String h = schema.holders();
    String q = schema.queue();
    String c = schema.clients();
    String clock = dialect.nowMillis();
    this.soleHolders = dialect == SqlDialect.POSTGRESQL;
    String soleColumns = soleHolders ? ", has_rows, " + SoleHolder.COLUMNS : "";
    now = "SELECT " + clock + (dialect == SqlDialect.MARIADB ? " FROM DUAL" : "");
    lockResource =
        "SELECT name, fence, amount, queue_seq, woken_owner, woken_at, "
            + clock
            + soleColumns
            + " FROM "
            + r
            + " WHERE res_key = ? FOR UPDATE";
    insertResource =
        "INSERT INTO "
            + r
            + " (res_key, kind, name, fence, amount, queue_seq, woken_owner, woken_at)"
            + " VALUES (?, ?, ?, 0, NULL, 0, NULL, 0)";
    updateResource =
        "UPDATE "
            + r
            + " SET fence = ?, amount = ?, queue_seq = ?, woken_owner = ?, woken_at = ?"
            + (soleHolders ? ", has_rows = ?, " + SoleHolder.ASSIGNMENTS : "")
            + " WHERE res_key = ?";
    selectResource = "SELECT amount, " + clock + " FROM " + r + " WHERE res_key = ?";
    selectHolders =
        "SELECT holder_id, client_id, shared_holds, exclusive_holds, expires_at, token FROM "
            + h
            + " WHERE res_key = ? ORDER BY token";
    insertHolder =
        "INSERT INTO "
            + h
            + " (res_key, holder_key, holder_id, client_id, shared_holds, exclusive_holds,"
            + " expires_at, token) VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
    updateHolder =
        "UPDATE "
            + h
            + " SET shared_holds = ?, exclusive_holds = ?, expires_at = ?"
            + " WHERE res_key = ? AND holder_key = ?";
    deleteHolder = "DELETE FROM " + h + " WHERE res_key = ? AND holder_key = ?";
    selectQueue = "SELECT owner, mode, deadline FROM " + q + " WHERE res_key = ? ORDER BY arrival";
    insertQueue =
        "INSERT INTO "
            + q
            + " (res_key, holder_key, owner, mode, deadline, arrival) VALUES (?, ?, ?, ?, ?, ?)";
    updateQueue =
        "UPDATE " + q + " SET mode = ?, deadline = ? WHERE res_key = ? AND holder_key = ?";
    deleteQueue = "DELETE FROM " + q + " WHERE res_key = ? AND holder_key = ?";
    listHolders =
        "SELECT r.name, h.holder_id, h.client_id, h.shared_holds, h.exclusive_holds,"
            + " h.expires_at - ("
            + clock
            + "), h.token FROM "
            + h
            + " h JOIN "
            + r
            + " r ON r.res_key = h.res_key WHERE r.kind = 'LOCK' AND h.expires_at > ("
            + clock
            + ")"
            + (soleHolders
                ? " UNION ALL SELECT name, sole_holder_id, sole_client_id, CASE sole_mode WHEN 'S'"
                    + " THEN 1 ELSE 0 END, CASE sole_mode WHEN 'X' THEN 1 ELSE 0 END,"
                    + " sole_expires_at - ("
                    + clock
                    + "), sole_token FROM "
                    + r
                    + " WHERE kind = 'LOCK' AND sole_expires_at > ("
                    + clock
                    + ")"
                : "")
            + " ORDER BY 1, 7";
    countQueues =
        "SELECT r.name, COUNT(*) FROM "
            + q
            + " q JOIN "
            + r
            + " r ON r.res_key = q.res_key WHERE q.deadline > ("
            + clock
            + ") GROUP BY r.name";
    selectClients =
        "SELECT client_id, host, pid, started_at FROM "
            + c
            + " WHERE expires_at > ("
            + clock
            + ") ORDER BY client_id";
    updateClient =
        "UPDATE "
            + c
            + " SET host = ?, pid = ?, started_at = ?, expires_at = ("
            + clock
            + ") + ? WHERE client_id = ?";
    insertClient =
        "INSERT INTO "
            + c
            + " (client_id, host, pid, started_at, expires_at) VALUES (?, ?, ?, ?, ("
            + clock
            + ") + ?)";
    deleteClient = "DELETE FROM " + c + " WHERE client_id = ?";
    holdersOfResource =
        "SELECT holder_id, expires_at, token FROM " + h + " WHERE res_key = ? AND expires_at > ?";
    deleteExpiredHolders = "DELETE FROM " + h + " WHERE res_key = ? AND expires_at <= ?";
    lockAndLoad =
        this.multiStatements
            ? lockResource
                + "; SELECT 'H', holder_id, client_id, shared_holds, exclusive_holds, expires_at,"
                + " token FROM "
                + h
                + " WHERE res_key = ? UNION ALL SELECT 'Q', owner, CAST(mode AS "
                + (dialect == SqlDialect.POSTGRESQL ? "VARCHAR" : "CHAR")
                + "(255)), 0, 0, deadline, arrival FROM "
                + q
                + " WHERE res_key = ? ORDER BY 1, 7"
            : null;
    holdersTable = h;
    resourcesTable = r;
    recordWakeup =
        "UPDATE "
            + r
            + " SET wake_seq = wake_seq + 1, wake_slots = ?, wake_owner = ? WHERE res_key = ?";
    holderToken = "SELECT token FROM " + h + " WHERE res_key = ? AND holder_key = ?";
  }

  /**
   * One statement that extends the leases of {@code grants} grants, each given as (res_key,
   * holder_key, token), to at least the second parameter if they are alive at the first one.
   */
  String renew(int grants) {
    return "UPDATE "
        + holdersTable
        + " SET expires_at = CASE WHEN expires_at > ? THEN expires_at ELSE ? END"
        + " WHERE expires_at > ? AND (res_key, holder_key, token) IN ("
        + rowValues(grants)
        + ")";
  }

  /**
   * One statement that extends the leases of those of {@code grants} grants that are sole holders
   * ({@link SoleHolder}), with the parameters of {@link #renew}; null where there are none.
   */
  @Nullable String renewSole(int grants) {
    if (!soleHolders) {
      return null;
    }
    return "UPDATE "
        + resourcesTable
        + " SET sole_expires_at = CASE WHEN sole_expires_at > ? THEN sole_expires_at ELSE ? END"
        + " WHERE sole_expires_at > ? AND (res_key, sole_holder_key, sole_token) IN ("
        + rowValues(grants)
        + ")";
  }

  /**
   * Which of {@code grants} grants, given as (res_key, holder_key, token), are alive at the first
   * parameter: holder rows, and where there are sole holders ({@link #soleHolders}) those too, the
   * first parameter and the grants bound a second time after the first.
   */
  String alive(int grants) {
    String rows =
        "SELECT res_key, holder_key, token FROM "
            + holdersTable
            + " WHERE expires_at > ? AND (res_key, holder_key, token) IN ("
            + rowValues(grants)
            + ")";
    if (!soleHolders) {
      return rows;
    }
    return rows
        + " UNION ALL SELECT res_key, sole_holder_key, sole_token FROM "
        + resourcesTable
        + " WHERE sole_expires_at > ? AND (res_key, sole_holder_key, sole_token) IN ("
        + rowValues(grants)
        + ")";
  }

  /** The last wake-up of each of {@code resources} resources, given by key. */
  String readWakeups(int resources) {
    return "SELECT res_key, wake_seq, wake_slots, wake_owner FROM "
        + resourcesTable
        + " WHERE res_key IN ("
        + String.join(", ", java.util.Collections.nCopies(resources, "?"))
        + ")";
  }

  private static String rowValues(int rows) {
    return String.join(", ", java.util.Collections.nCopies(rows, "(?, ?, ?)"));
  }

  /** A new, empty set of writes for one operation. */
  Writes writes() {
    return new Writes(dialect, multiStatements);
  }

  /**
   * Whether the connection's driver sends a text of several statements with bound parameters, and
   * answers each in order: asked once per backend, of its first connection, by sending one such
   * text. PostgreSQL's driver always does, H2's never does; MariaDB Connector/J (and MySQL's) only
   * with {@code allowMultiQueries=true}, which latchkey sets on the connections it makes itself
   * (JdbcBackendProvider) but a user's data source may not have. Without it, the server refuses the
   * text as a syntax error (SQLSTATE class 42) and nothing ran; any other failure is thrown.
   */
  static boolean multiStatementsAllowed(Connection connection, SqlDialect dialect)
      throws SQLException {
    if (dialect != SqlDialect.MARIADB) {
      return dialect == SqlDialect.POSTGRESQL;
    }
    try (PreparedStatement probe =
        connection.prepareStatement("SELECT ? FROM DUAL; SELECT ? FROM DUAL")) {
      probe.setInt(1, 1);
      probe.setInt(2, 2);
      probe.execute();
      try (ResultSet first = probe.getResultSet()) {
        if (first == null || !first.next() || first.getInt(1) != 1) {
          return false;
        }
      }
      if (!probe.getMoreResults()) {
        return false;
      }
      try (ResultSet second = probe.getResultSet()) {
        return second.next() && second.getInt(1) == 2;
      }
    } catch (SQLException e) {
      String state = e.getSQLState();
      if (state != null && state.startsWith("42")) {
        return false;
      }
      throw e;
    }
  }

  /** The database's time, in milliseconds since the epoch. */
  long now(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet rs = statement.executeQuery(now)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
