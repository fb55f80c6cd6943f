package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.mariadb.jdbc.MariaDbDataSource;

/**
 * Texts of several statements on MariaDB: used where the connection allows them ({@code
 * allowMultiQueries}, which latchkey's own pool sets), one statement per round trip where a user's
 * data source does not, and both on one table set at once. (The whole kit runs on the first path in
 * {@link MariaDbConformanceTest}.)
 */
class MariaDbMultiStatementsTest {
  @RegisterExtension static final SqlServers SERVERS = new SqlServers();

  private static String url() {
    return SERVERS.mariaDb().jdbcUrl();
  }

  @ParameterizedTest
  @EnumSource(MariaDbDriver.class)
  void theProbeAnswersWhatTheConnectionAllows(MariaDbDriver driver) throws SQLException {
    String url = driver.url(url());
    try (Connection plain = DriverManager.getConnection(url);
        Connection multi = DriverManager.getConnection(url + "&allowMultiQueries=true")) {
      assertThat(Sql.multiStatementsAllowed(plain, SqlDialect.MARIADB)).isFalse();
      assertThat(Sql.multiStatementsAllowed(multi, SqlDialect.MARIADB)).isTrue();
      // The refused text left the connection usable.
      assertThat(Sql.multiStatementsAllowed(plain, SqlDialect.MARIADB)).isFalse();
    }
  }

  @Test
  void aDataSourceWithoutSeveralStatementsWorksBesideTheOwnPool() throws SQLException {
    MariaDbDataSource single = new MariaDbDataSource(url());
    try (Latchkey own = Latchkey.connect(url() + "&latchkey.createSchema=true");
        Latchkey user =
            Latchkey.using(
                JdbcBackend.builder(single).createSchema(true).build(),
                LatchkeyOptions.defaults())) {
      Lease first = own.lock("shared").tryAcquire().orElseThrow();
      assertThat(user.lock("shared").tryAcquire()).isEmpty();
      assertThat(user.admin().inspect("shared")).isPresent();
      first.release();

      Lease second = user.lock("shared").tryAcquire().orElseThrow();
      assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
      assertThat(own.lock("shared").tryAcquire()).isEmpty();
      second.release();

      Lease third = own.lock("shared").tryAcquire().orElseThrow();
      assertThat(third.fencingToken()).isGreaterThan(second.fencingToken());
      third.release();
      assertThat(user.admin().inspect("shared")).isEmpty();
    }
  }
}
