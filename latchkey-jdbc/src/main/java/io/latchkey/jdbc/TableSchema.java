package io.latchkey.jdbc;

import io.latchkey.BackendUnavailableException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The lease table's tables under one prefix, and the DDL that creates them: the shipped file of the
 * dialect ({@link SqlDialect#schemaResource()}), with {@code latchkey_} replaced by the prefix.
 */
final class TableSchema {
  /** The prefix of the shipped files. */
  static final String DEFAULT_PREFIX = "latchkey_";

  private static final Pattern PREFIX = Pattern.compile("[A-Za-z][A-Za-z0-9_]{0,29}");

  private final SqlDialect dialect;
  private final String prefix;
  private final List<String> modeTables;

  TableSchema(SqlDialect dialect, String prefix) {
    this(dialect, prefix, JdbcMode.TABLE);
  }

  /**
   * @param mode the mode, whose own tables (advisory mode's key claims on PostgreSQL, row mode's
   *     lock rows) are checked beside the four of every mode
   */
  TableSchema(SqlDialect dialect, String prefix, JdbcMode mode) {
    this.dialect = dialect;
    this.prefix = checkedPrefix(prefix);
    this.modeTables =
        switch (mode) {
          case TABLE -> List.of();
          case ADVISORY -> dialect == SqlDialect.POSTGRESQL ? List.of(advisoryKeys()) : List.of();
          case ROW -> List.of(rowLocks());
        };
  }

  static String checkedPrefix(String prefix) {
    Objects.requireNonNull(prefix, "tablePrefix must not be null");
    if (!PREFIX.matcher(prefix).matches()) {
      throw new IllegalArgumentException(
          "tablePrefix must be a letter followed by at most 29 letters, digits or '_', was '"
              + prefix
              + "'");
    }
    return prefix;
  }

  String resources() {
    return prefix + "resources";
  }

  String holders() {
    return prefix + "holders";
  }

  String queue() {
    return prefix + "queue";
  }

  String clients() {
    return prefix + "clients";
  }

  /** The epoch record of a quorum member ({@link TableFenceStore}). */
  String epoch() {
    return prefix + "epoch";
  }

  /** Advisory mode on PostgreSQL: which lock claimed each 64-bit key first. */
  String advisoryKeys() {
    return prefix + "advisory_keys";
  }

  /** Row mode: the rows that holds lock. */
  String rowLocks() {
    return prefix + "row_locks";
  }

  String prefix() {
    return prefix;
  }

  /** The statements of the dialect's schema file, for this prefix. */
  List<String> ddl() {
    String text;
    // Through the class, not its loader: on the module path the schema's package is this module's
    // own and not open to others, the loader included.
    try (InputStream in = TableSchema.class.getResourceAsStream("/" + dialect.schemaResource())) {
      if (in == null) {
        throw new IllegalStateException(dialect.schemaResource() + " is missing from the jar");
      }
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    StringBuilder withoutComments = new StringBuilder();
    for (String line : text.split("\n", -1)) {
      if (!line.trim().startsWith("--")) {
        withoutComments.append(line).append('\n');
      }
    }
    List<String> statements = new ArrayList<>();
    for (String statement : withoutComments.toString().split(";", -1)) {
      if (!statement.isBlank()) {
        statements.add(statement.trim().replace(DEFAULT_PREFIX, prefix));
      }
    }
    return statements;
  }

  /** Creates the tables that do not exist yet. */
  void create(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      for (String ddl : ddl()) {
        statement.execute(ddl);
      }
    }
  }

  /**
   * Whether the tables are there. Checked before creating them: DDL on tables in use waits for
   * their metadata locks (MariaDB), even when it would create nothing.
   */
  boolean exists(Connection connection) throws SQLException {
    try {
      check(connection);
      return true;
    } catch (SQLException e) {
      if (dialect.isMissingSchema(e)) {
        // PostgreSQL refuses every statement of a transaction after an error.
        connection.rollback();
        return false;
      }
      throw e;
    }
  }

  /**
   * Reads nothing from each table, which fails if one is missing; on PostgreSQL also from the
   * columns of the one-statement path ({@code has_rows}, {@link SoleHolder}), which tables made by
   * an earlier latchkey lack.
   *
   * @throws SQLException if a table or column is missing (see {@link #missing}) or the database
   *     fails
   */
  void check(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      for (String table : tables()) {
        statement.executeQuery("SELECT 1 FROM " + table + " WHERE 1 = 0").close();
      }
      if (dialect == SqlDialect.POSTGRESQL) {
        statement
            .executeQuery(
                "SELECT has_rows, "
                    + SoleHolder.ALL_COLUMNS
                    + " FROM "
                    + resources()
                    + " WHERE 1 = 0")
            .close();
      }
    }
  }

  private List<String> tables() {
    List<String> tables =
        new ArrayList<>(List.of(resources(), holders(), queue(), clients(), epoch()));
    tables.addAll(modeTables);
    return tables;
  }

  /**
   * A database without latchkey's tables cannot serve, as one that is down cannot: the same
   * exception, so that callers handle both alike (retry once the tables are there), and never the
   * {@link IllegalStateException} that the API keeps for misuse (a lease released twice).
   *
   * @param cause the database's complaint about a missing table or column
   * @return an error that says what to run
   */
  BackendUnavailableException missing(SQLException cause) {
    return new BackendUnavailableException(
        "the latchkey tables ("
            + String.join(", ", tables())
            + ") are missing or were made by an earlier latchkey: run the SQL file "
            + dialect.schemaResource()
            + " of latchkey-jdbc"
            + (prefix.equals(DEFAULT_PREFIX)
                ? ""
                : " with 'latchkey_' replaced by '" + prefix + "'")
            + " (with Flyway, Liquibase or by hand), or open the backend with createSchema=true"
            + " ("
            + cause.getMessage()
            + ")",
        cause);
  }
}
