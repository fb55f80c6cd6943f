package io.latchkey.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The writes of one operation, gathered so that they go in one round trip where the driver sends
 * the statements of one multi-statement text together and waits for the answers once ({@link
 * Sql#multiStatements}: PostgreSQL, and MariaDB/MySQL with {@code allowMultiQueries}). Elsewhere
 * each runs as a statement of its own, in order.
 *
 * <p>In a text, the statements run in order and the first that fails stops the rest: the ones
 * before it ran inside the transaction, which the caller then rolls back, as when they ran one by
 * one. Every statement's answer is read, in order, before the text counts as done, so that a
 * failure of any of them (MariaDB's driver may report a later statement's only when its answer is
 * read) is the text's failure.
 */
final class Writes {
  private final SqlDialect dialect;
  private final boolean multiStatements;
  private final List<String> statements = new ArrayList<>();
  private final List<Object[]> parameters = new ArrayList<>();

  /** Use {@link Sql#writes()}. */
  Writes(SqlDialect dialect, boolean multiStatements) {
    this.dialect = dialect;
    this.multiStatements = multiStatements;
  }

  /**
   * Adds a statement; a null parameter must be given as a {@link Null} of its type.
   *
   * @param sql one statement, without a terminating ';'
   * @param values its parameters, in order
   */
  void add(String sql, Object... values) {
    statements.add(sql);
    parameters.add(values);
  }

  /** A NULL parameter of an SQL type ({@link Types}). */
  record Null(int sqlType) {}

  static Object nullable(@Nullable Long value) {
    return value == null ? new Null(Types.BIGINT) : value;
  }

  static Object nullable(@Nullable String value) {
    return value == null ? new Null(Types.VARCHAR) : value;
  }

  /** Runs the statements gathered, in order, and forgets them. */
  void run(Connection connection) throws SQLException {
    send(connection, false);
  }

  /**
   * Runs the statements gathered as the transaction's last. Where texts of several statements are
   * sent, the {@code COMMIT} travels with them, in their round trip: the driver (pgjdbc, and
   * MariaDB Connector/J, from the server's status flags) then knows the transaction is over, and
   * the {@code commit()} that {@link Transactions} calls afterwards sends nothing. Elsewhere (and
   * with nothing to write) that {@code commit()} commits. A failure of the text is judged by {@link
   * Transactions} as a failure of that {@code commit()} would be: the database's own rollback
   * (deadlock, lock wait timeout) stopped the text before its {@code COMMIT}, so the operation may
   * run again; any other failure is its answer, of unknown outcome (ADR 0007). Nothing may run on
   * the connection after this but that {@code commit()}, or a rollback after a failure.
   */
  void runAndCommit(Connection connection) throws SQLException {
    send(connection, true);
  }

  private void send(Connection connection, boolean commit) throws SQLException {
    try {
      if (multiStatements && (statements.size() > 1 || (commit && !statements.isEmpty()))) {
        String text =
            (dialect == SqlDialect.POSTGRESQL ? postgresText() : String.join("; ", statements))
                + (commit ? "; COMMIT" : "");
        try (PreparedStatement all = connection.prepareStatement(text)) {
          int index = 1;
          for (Object[] values : parameters) {
            for (Object value : values) {
              bind(all, index++, value);
            }
          }
          all.execute();
          readAllAnswers(all);
        }
        return;
      }
      for (int i = 0; i < statements.size(); i++) {
        try (PreparedStatement one = connection.prepareStatement(statements.get(i))) {
          int index = 1;
          for (Object value : parameters.get(i)) {
            bind(one, index++, value);
          }
          one.execute();
        }
      }
    } finally {
      statements.clear();
      parameters.clear();
    }
  }

  /** Reads the answers of a text's statements after the first, in order, to its end. */
  private static void readAllAnswers(PreparedStatement text) throws SQLException {
    while (text.getMoreResults() || text.getUpdateCount() != -1) {
      // Each answer read (and a result set closed by the move to the next); a failure is thrown.
    }
  }

  private static final Pattern WRITE =
      Pattern.compile("(?:INSERT INTO|UPDATE|DELETE FROM) (\\S+) .*", Pattern.DOTALL);

  /**
   * The statements as one PostgreSQL statement where they allow it, else as several in one text.
   * Writes to tables that differ become the parts of one {@code WITH} (the {@code SELECT}s, which
   * only call functions, its main query): they run on one snapshot and none sees another's rows,
   * which they need not, each writing rows of its own table whose new values it was given. Two
   * writes to one table stay statements of their own, in order (a holder row deleted and inserted
   * again must be deleted first).
   */
  String postgresText() {
    List<String> writes = new ArrayList<>();
    List<String> calls = new ArrayList<>();
    Set<String> tables = new HashSet<>();
    for (String statement : statements) {
      Matcher write = WRITE.matcher(statement);
      if (write.matches()) {
        if (!calls.isEmpty() || !tables.add(write.group(1))) {
          return String.join("; ", statements);
        }
        writes.add(statement);
      } else if (statement.startsWith("SELECT ")) {
        calls.add(statement.substring("SELECT ".length()));
      } else {
        return String.join("; ", statements);
      }
    }
    if (statements.size() < 2) {
      return String.join("; ", statements);
    }
    StringBuilder text = new StringBuilder();
    int last = calls.isEmpty() ? writes.size() - 1 : writes.size();
    for (int i = 0; i < last; i++) {
      text.append(i == 0 ? "WITH " : ", ").append('w').append(i).append(" AS (");
      text.append(writes.get(i)).append(')');
    }
    if (text.length() > 0) {
      text.append(' ');
    }
    text.append(calls.isEmpty() ? writes.get(last) : "SELECT " + String.join(", ", calls));
    return text.toString();
  }

  private static void bind(PreparedStatement statement, int index, Object value)
      throws SQLException {
    if (value instanceof Null nul) {
      statement.setNull(index, nul.sqlType());
    } else if (value instanceof String text) {
      statement.setString(index, text);
    } else if (value instanceof Integer number) {
      statement.setInt(index, number);
    } else if (value instanceof Long number) {
      statement.setLong(index, number);
    } else if (value instanceof Boolean flag) {
      statement.setBoolean(index, flag);
    } else {
      throw new IllegalArgumentException("no binding for " + value.getClass());
    }
  }
}
