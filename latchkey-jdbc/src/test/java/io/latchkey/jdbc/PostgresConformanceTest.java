package io.latchkey.jdbc;

import io.latchkey.servers.PostgresTestServer;
import io.latchkey.testkit.BackendFixture;
import io.latchkey.testkit.ConformanceKit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

/**
 * The whole conformance kit on a PostgreSQL server that the test starts, in table mode and (nested)
 * in advisory and row modes.
 */
class PostgresConformanceTest extends ConformanceKit {
  private static @Nullable PostgresTestServer server;

  @BeforeAll
  static void startPostgres() {
    server = PostgresTestServer.start();
  }

  @AfterAll
  static void stopPostgres() {
    if (server != null) {
      server.close();
    }
  }

  private static String uri() {
    if (server == null) {
      throw new IllegalStateException("PostgreSQL has not been started");
    }
    return server.jdbcUrl() + "&latchkey.createSchema=true";
  }

  private static final BackendFixture POSTGRES =
      JdbcFixtures.tableMode("postgresql-table", PostgresConformanceTest::uri, true);

  /** Advisory mode on the same server, on tables of its own: modes never share a prefix. */
  private static final BackendFixture POSTGRES_ADVISORY =
      JdbcFixtures.advisoryMode(
          "postgresql-advisory",
          () -> uri() + "&latchkey.mode=advisory&latchkey.tablePrefix=advisory_",
          SqlDialect.POSTGRESQL);

  /** Row mode on the same server, on tables of its own. */
  private static final BackendFixture POSTGRES_ROW =
      JdbcFixtures.rowMode(
          "postgresql-row",
          () -> uri() + "&latchkey.mode=row&latchkey.tablePrefix=row_",
          SqlDialect.POSTGRESQL);

  @Override
  protected BackendFixture fixture() {
    return POSTGRES;
  }

  /** The whole kit again, in advisory mode. */
  @Nested
  class Advisory extends ConformanceKit {
    @Override
    protected BackendFixture fixture() {
      return POSTGRES_ADVISORY;
    }
  }

  /** The whole kit again, in row mode. */
  @Nested
  class Row extends ConformanceKit {
    @Override
    protected BackendFixture fixture() {
      return POSTGRES_ROW;
    }
  }
}
