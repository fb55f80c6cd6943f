package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Pins how PostgreSQL gets an operation's writes: writes to different tables as one statement with
 * data-modifying {@code WITH} parts, two writes to one table as statements of their own in order.
 * (That they do what the statements one by one did is the conformance kit's part.)
 */
class WritesTest {

  @Test
  void writesToDifferentTablesBecomeOneStatement() {
    Writes writes = new Writes(SqlDialect.POSTGRESQL, true);
    writes.add("INSERT INTO h (a) VALUES (?)", 1);
    writes.add("UPDATE r SET b = ? WHERE k = ?", 2L, "k");

    assertThat(writes.postgresText())
        .isEqualTo("WITH w0 AS (INSERT INTO h (a) VALUES (?)) UPDATE r SET b = ? WHERE k = ?");
  }

  @Test
  void wakeupsBecomeTheMainQueryAfterTheWrites() {
    Writes writes = new Writes(SqlDialect.POSTGRESQL, true);
    writes.add("DELETE FROM h WHERE k = ?", "k");
    writes.add("UPDATE r SET b = ? WHERE k = ?", 2L, "k");
    writes.add("SELECT pg_notify(?, ?)", "c", "p");

    assertThat(writes.postgresText())
        .isEqualTo(
            "WITH w0 AS (DELETE FROM h WHERE k = ?), w1 AS (UPDATE r SET b = ? WHERE k = ?)"
                + " SELECT pg_notify(?, ?)");
  }

  @Test
  void twoWritesToOneTableStayInOrder() {
    Writes writes = new Writes(SqlDialect.POSTGRESQL, true);
    writes.add("DELETE FROM h WHERE k = ?", "k");
    writes.add("INSERT INTO h (a) VALUES (?)", 1);

    assertThat(writes.postgresText())
        .isEqualTo("DELETE FROM h WHERE k = ?; INSERT INTO h (a) VALUES (?)");
  }

  @Test
  void aWriteAfterAWakeupKeepsTheOrderOfTheText() {
    Writes writes = new Writes(SqlDialect.POSTGRESQL, true);
    writes.add("SELECT pg_notify(?, ?)", "c", "p");
    writes.add("UPDATE r SET b = ? WHERE k = ?", 2L, "k");

    assertThat(writes.postgresText())
        .isEqualTo("SELECT pg_notify(?, ?); UPDATE r SET b = ? WHERE k = ?");
  }
}
