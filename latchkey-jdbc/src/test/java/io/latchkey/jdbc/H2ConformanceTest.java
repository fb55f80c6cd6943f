package io.latchkey.jdbc;

import io.latchkey.testkit.BackendFixture;
import io.latchkey.testkit.ConformanceKit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The whole conformance kit on H2 in server mode, in table mode. */
class H2ConformanceTest extends ConformanceKit {
  private static @Nullable H2TestServer server;

  @BeforeAll
  static void startH2() {
    server = H2TestServer.start("kit");
  }

  @AfterAll
  static void stopH2() {
    if (server != null) {
      server.close();
    }
  }

  private static String uri() {
    if (server == null) {
      throw new IllegalStateException("H2 has not been started");
    }
    return server.jdbcUrl() + ";latchkey.createSchema=true";
  }

  private static final BackendFixture H2 =
      JdbcFixtures.tableMode("h2-table", H2ConformanceTest::uri, false);

  @Override
  protected BackendFixture fixture() {
    return H2;
  }
}
