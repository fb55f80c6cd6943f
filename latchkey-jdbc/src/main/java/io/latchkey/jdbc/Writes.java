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
 * The writes of one operation, gathered so that PostgreSQL gets them in one round trip: pgjdbc
 * sends the statements of one multi-statement text together and waits for the answers once. On the
 * other databases each runs as a statement of its own, in order, as before (their drivers send
 * several statements in one text only if the URL allows it).
 */
final class Writes {
  private final SqlDialect dialect;
  private final List<String> statements = new ArrayList<>();
  private final List<Object[]> parameters = new ArrayList<>();

  Writes(SqlDialect dialect) {
    this.dialect = dialect;
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
   * Runs the statements gathered as the transaction's last. On PostgreSQL the {@code COMMIT}
   * travels with them, in their round trip: pgjdbc then knows the transaction is over, and the
   * {@code commit()} that {@link Transactions} calls afterwards sends nothing. Elsewhere (and with
   * nothing to write) that {@code commit()} commits. Nothing may run on the connection after this
   * but that {@code commit()}, or a rollback after a failure.
   */
  void runAndCommit(Connection connection) throws SQLException {
    send(connection, true);
  }

  private void send(Connection connection, boolean commit) throws SQLException {
    try {
      if (dialect == SqlDialect.POSTGRESQL
          && (statements.size() > 1 || (commit && !statements.isEmpty()))) {
        String text = postgresText() + (commit ? "; COMMIT" : "");
        try (PreparedStatement all = connection.prepareStatement(text)) {
          int index = 1;
          for (Object[] values : parameters) {
            for (Object value : values) {
              bind(all, index++, value);
            }
          }
          all.execute();
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
    } else {
      throw new IllegalArgumentException("no binding for " + value.getClass());
    }
  }
}
