package io.latchkey.jdbc;

import io.latchkey.servers.MariaDbTestServer;
import io.latchkey.testkit.BackendFixture;
import io.latchkey.testkit.ConformanceKit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;

/**
 * The whole conformance kit on a MariaDB server that the test starts, in table mode and (nested) in
 * advisory and row modes; and through MySQL's own driver ({@code jdbc:mysql:}, {@link
 * MariaDbDriver#MYSQL}) a few suites of each mode ({@link DriverPathSuites}; the whole kit with
 * {@code -Psoak}, tag {@code slow}), which keeps the default build's time.
 */
class MariaDbConformanceTest extends ConformanceKit {
  private static @Nullable MariaDbTestServer server;

  @BeforeAll
  static void startMariaDb() {
    server = MariaDbTestServer.start();
  }

  @AfterAll
  static void stopMariaDb() {
    if (server != null) {
      server.close();
    }
  }

  private static String uri() {
    if (server == null) {
      throw new IllegalStateException("MariaDB has not been started");
    }
    return server.jdbcUrl() + "&latchkey.createSchema=true";
  }

  private static final BackendFixture MARIADB =
      JdbcFixtures.tableMode("mariadb-table", MariaDbConformanceTest::uri, false);

  /** Advisory mode on the same server, on tables of its own: modes never share a prefix. */
  private static final BackendFixture MARIADB_ADVISORY =
      JdbcFixtures.advisoryMode(
          "mariadb-advisory",
          () -> uri() + "&latchkey.mode=advisory&latchkey.tablePrefix=advisory_",
          SqlDialect.MARIADB);

  /** Row mode on the same server, on tables of its own. */
  private static final BackendFixture MARIADB_ROW =
      JdbcFixtures.rowMode(
          "mariadb-row",
          () -> uri() + "&latchkey.mode=row&latchkey.tablePrefix=row_",
          SqlDialect.MARIADB);

  /** Table mode again through MySQL's own driver, on tables of its own. */
  private static final BackendFixture MYSQL_DRIVER =
      JdbcFixtures.tableMode(
          "mariadb-via-jdbc-mysql-table",
          () -> MariaDbDriver.MYSQL.url(uri()) + "&latchkey.tablePrefix=mysql_driver_",
          false);

  /** Advisory mode through MySQL's own driver, on tables of its own. */
  private static final BackendFixture MYSQL_DRIVER_ADVISORY =
      JdbcFixtures.advisoryMode(
          "mariadb-via-jdbc-mysql-advisory",
          () ->
              MariaDbDriver.MYSQL.url(uri())
                  + "&latchkey.mode=advisory&latchkey.tablePrefix=mysql_advisory_",
          SqlDialect.MARIADB);

  /** Row mode through MySQL's own driver, on tables of its own. */
  private static final BackendFixture MYSQL_DRIVER_ROW =
      JdbcFixtures.rowMode(
          "mariadb-via-jdbc-mysql-row",
          () ->
              MariaDbDriver.MYSQL.url(uri()) + "&latchkey.mode=row&latchkey.tablePrefix=mysql_row_",
          SqlDialect.MARIADB);

  @Override
  protected BackendFixture fixture() {
    return MARIADB;
  }

  /** The whole kit again, in advisory mode. */
  @Nested
  class Advisory extends ConformanceKit {
    @Override
    protected BackendFixture fixture() {
      return MARIADB_ADVISORY;
    }
  }

  /**
   * Table mode through {@code jdbc:mysql:} and MySQL's own driver: a few suites ({@code -Psoak}:
   * the whole kit).
   */
  @Nested
  class MysqlDriver extends DriverPathSuites {
    @Override
    protected BackendFixture fixture() {
      return MYSQL_DRIVER;
    }
  }

  /** The whole kit again, in table mode, through MySQL's own driver. */
  @Nested
  @Tag("slow")
  class MysqlDriverWholeKit extends ConformanceKit {
    @Override
    protected BackendFixture fixture() {
      return MYSQL_DRIVER;
    }
  }

  /** Advisory mode through MySQL's own driver: a few suites ({@code -Psoak}: the whole kit). */
  @Nested
  class MysqlDriverAdvisory extends DriverPathSuites {
    @Override
    protected BackendFixture fixture() {
      return MYSQL_DRIVER_ADVISORY;
    }
  }

  /** The whole kit again, in advisory mode, through MySQL's own driver. */
  @Nested
  @Tag("slow")
  class MysqlDriverAdvisoryWholeKit extends ConformanceKit {
    @Override
    protected BackendFixture fixture() {
      return MYSQL_DRIVER_ADVISORY;
    }
  }

  /** Row mode through MySQL's own driver: a few suites ({@code -Psoak}: the whole kit). */
  @Nested
  class MysqlDriverRow extends DriverPathSuites {
    @Override
    protected BackendFixture fixture() {
      return MYSQL_DRIVER_ROW;
    }
  }

  /** The whole kit again, in row mode, through MySQL's own driver. */
  @Nested
  @Tag("slow")
  class MysqlDriverRowWholeKit extends ConformanceKit {
    @Override
    protected BackendFixture fixture() {
      return MYSQL_DRIVER_ROW;
    }
  }

  /** The whole kit again, in row mode. */
  @Nested
  class Row extends ConformanceKit {
    @Override
    protected BackendFixture fixture() {
      return MARIADB_ROW;
    }
  }
}
