package io.latchkey.jdbc;

import java.sql.SQLException;
import java.util.Locale;

/**
 * What differs between the databases latchkey-jdbc speaks to: how to read the database's clock, the
 * schema file, and which errors mean "rolled back, try the transaction again".
 */
public enum SqlDialect {
  /** PostgreSQL 10 or later: LISTEN/NOTIFY pushes wake-ups. */
  POSTGRESQL(
      "postgresql.sql",
      // clock_timestamp(), not now(): now() is when the transaction began.
      "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"),
  /** MariaDB 10.3 or later, and MySQL 8.0 or later. */
  MARIADB(
      "mariadb.sql",
      // SYSDATE(3), not NOW(3): NOW() is when the statement began.
      "CAST(UNIX_TIMESTAMP(SYSDATE(3)) * 1000 AS SIGNED)"),
  /** H2 2.x, in-process or in server mode. */
  H2(
      "h2.sql",
      "DATEDIFF('MILLISECOND', TIMESTAMP WITH TIME ZONE '1970-01-01 00:00:00+00',"
          + " CURRENT_TIMESTAMP)");

  private final String schemaFile;
  private final String nowMillis;

  SqlDialect(String schemaFile, String nowMillis) {
    this.schemaFile = schemaFile;
    this.nowMillis = nowMillis;
  }

  /**
   * @return the class-path resource holding this database's schema, for Flyway or Liquibase
   */
  public String schemaResource() {
    return "io/latchkey/jdbc/schema/" + schemaFile;
  }

  /** An SQL expression: the database's current time in milliseconds since the epoch. */
  String nowMillis() {
    return nowMillis;
  }

  /**
   * @param jdbcUrl a JDBC URL
   * @return the dialect of its database
   * @throws IllegalArgumentException for a database latchkey-jdbc does not speak to
   */
  public static SqlDialect ofUrl(String jdbcUrl) {
    String lower = jdbcUrl.toLowerCase(Locale.ROOT);
    if (lower.startsWith("jdbc:postgresql:")) {
      return POSTGRESQL;
    }
    if (lower.startsWith("jdbc:mariadb:") || lower.startsWith("jdbc:mysql:")) {
      return MARIADB;
    }
    if (lower.startsWith("jdbc:h2:")) {
      return H2;
    }
    int end = lower.indexOf(':', "jdbc:".length());
    throw new IllegalArgumentException(
        "latchkey-jdbc speaks to PostgreSQL (jdbc:postgresql:), MariaDB/MySQL (jdbc:mariadb:,"
            + " jdbc:mysql:) and H2 (jdbc:h2:), not to '"
            + (end > 0 ? lower.substring(0, end + 1) : "jdbc:")
            + "'");
  }

  /**
   * @param productName {@link java.sql.DatabaseMetaData#getDatabaseProductName()}
   * @return the dialect of that product
   * @throws IllegalArgumentException for a database latchkey-jdbc does not speak to
   */
  static SqlDialect ofProduct(String productName) {
    String lower = productName.toLowerCase(Locale.ROOT);
    if (lower.contains("postgres")) {
      return POSTGRESQL;
    }
    if (lower.contains("mariadb") || lower.contains("mysql")) {
      return MARIADB;
    }
    if (lower.equals("h2")) {
      return H2;
    }
    throw new IllegalArgumentException(
        "latchkey-jdbc speaks to PostgreSQL, MariaDB/MySQL and H2, not to " + productName);
  }

  /**
   * Whether the database rolled the transaction back and it may simply run again: a serialization
   * failure, a deadlock, a lock wait that timed out, or the unique key of a resource row that a
   * concurrent transaction inserted first.
   */
  boolean isRetryable(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql && isRetryableState(sql)) {
        return true;
      }
    }
    return false;
  }

  private boolean isRetryableState(SQLException e) {
    String state = e.getSQLState();
    if (state == null) {
      return false;
    }
    return switch (this) {
      // serialization_failure, deadlock_detected, lock_not_available, unique_violation
      case POSTGRESQL ->
          state.equals("40001")
              || state.equals("40P01")
              || state.equals("55P03")
              || state.equals("23505");
      // deadlock (40001, 1213), lock wait timeout (1205), duplicate key (1062)
      case MARIADB ->
          state.equals("40001")
              || e.getErrorCode() == 1205
              || e.getErrorCode() == 1062
              || e.getErrorCode() == 1213;
      // deadlock (40001), lock timeout (HYT00), duplicate key (23505), concurrent update (90131)
      case H2 ->
          state.equals("40001")
              || state.equals("HYT00")
              || state.equals("23505")
              || e.getErrorCode() == 90131;
    };
  }

  /**
   * Whether the error says a table of the schema does not exist, or (PostgreSQL) a column that
   * tables made by an earlier latchkey lack ({@link SoleHolder}).
   */
  boolean isMissingSchema(SQLException e) {
    String state = e.getSQLState();
    if (state == null) {
      return false;
    }
    return switch (this) {
      case POSTGRESQL -> state.equals("42P01") || state.equals("42703");
      case MARIADB -> state.equals("42S02") || e.getErrorCode() == 1146;
      case H2 -> state.equals("42S02") || state.equals("42S04") || e.getErrorCode() == 42102;
    };
  }
}
