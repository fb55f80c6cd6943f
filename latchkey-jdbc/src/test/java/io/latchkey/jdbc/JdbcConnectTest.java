package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcConnectionPool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Opening the backend by URI and over a data source, on H2 in this JVM. */
class JdbcConnectTest {
  private static String database() {
    return "jdbc:h2:mem:connect-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
  }

  /**
   * Which URLs let the own pool run a blocking call on the caller's thread: those whose driver
   * obeys the network timeout each operation sets, whatever timeouts of its own the URL gives it
   * (the pool bounds opening a connection itself), MySQL's own driver ({@code jdbc:mysql:}) among
   * them; not H2 over the network ({@code FrozenCallerThreadTest} shows the hangs behind a frozen
   * network otherwise).
   */
  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "POSTGRESQL | jdbc:postgresql://127.0.0.1:5432/db?user=u                  | true",
        "POSTGRESQL | jdbc:postgresql://127.0.0.1:5432/db?user=u&socketTimeout=60 | true",
        "POSTGRESQL | jdbc:postgresql://127.0.0.1:5432/db?connectTimeout=30       | true",
        "MARIADB    | jdbc:mariadb://127.0.0.1:3306/db                            | true",
        "MARIADB    | jdbc:mariadb://127.0.0.1:3306/db?connectTimeout=30000       | true",
        "MARIADB    | jdbc:mysql://127.0.0.1:3306/db                              | true",
        "MARIADB    | jdbc:mysql://127.0.0.1:3306/db?socketTimeout=60000          | true",
        "H2         | jdbc:h2:mem:x;DB_CLOSE_DELAY=-1                             | true",
        "H2         | jdbc:h2:tcp://127.0.0.1:9092/mem:x                          | false",
        "H2         | jdbc:h2:./data/x;AUTO_SERVER=TRUE                           | false"
      })
  void theOwnPoolKeepsTheDeadlineWhereTheDriverObeysTheNetworkTimeout(
      SqlDialect dialect, String url, boolean keepsDeadline) {
    assertThat(JdbcBackendProvider.keepsDeadline(dialect, url)).isEqualTo(keepsDeadline);
  }

  @Test
  void missingSchemaNamesTheFileToRun() {
    assertThatThrownBy(() -> Latchkey.connect(database()).close())
        .hasMessageContaining("io/latchkey/jdbc/schema/h2.sql")
        .hasMessageContaining("createSchema=true");
  }

  @Test
  void credentialsAreNeverShown() {
    String uri = database() + ";USER=sa;PASSWORD=s3cret-pw;latchkey.createSchema=true";
    try (Latchkey latchkey = Latchkey.connect(uri)) {
      assertThat(latchkey.backendDescription()).doesNotContain("s3cret-pw").startsWith("jdbc:h2:");
      assertThat(latchkey.toString()).doesNotContain("s3cret-pw");
      assertThat(latchkey.lock("a").tryAcquire()).isPresent().get().satisfies(Lease::release);
    }
  }

  @Test
  void tablePrefixNamesTheTables() throws SQLException {
    String url = database();
    try (Latchkey latchkey =
        Latchkey.connect(url + ";latchkey.tablePrefix=app_lk_;latchkey.createSchema=true")) {
      Lease lease = latchkey.lock("prefixed").tryAcquire().orElseThrow();
      DataSource dataSource = JdbcConnectionPool.create(url, "", "");
      try (Connection connection = dataSource.getConnection();
          ResultSet rs =
              connection.createStatement().executeQuery("SELECT COUNT(*) FROM app_lk_holders")) {
        rs.next();
        assertThat(rs.getInt(1)).isEqualTo(1);
      }
      lease.release();
    }
  }

  @Test
  void unknownOptionsAndModesAreRefused() {
    assertThatThrownBy(() -> Latchkey.connect(database() + ";latchkey.colour=blue"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("latchkey.colour");
    assertThatThrownBy(() -> Latchkey.connect(database() + ";latchkey.mode=rows"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown latchkey-jdbc mode 'rows'")
        .hasMessageContaining("[table, advisory, row]");
    assertThatThrownBy(() -> Latchkey.connect(database() + ";latchkey.mode=advisory"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("advisory mode needs PostgreSQL or MariaDB");
    assertThatThrownBy(() -> Latchkey.connect(database() + ";latchkey.mode=row"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("row mode needs PostgreSQL or MariaDB");
    assertThatThrownBy(() -> Latchkey.connect(database() + ";latchkey.holdConnections=0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("latchkey.holdConnections must be a number from 1 to 1000");
    assertThatThrownBy(() -> Latchkey.connect("jdbc:sqlite:file.db"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("jdbc:sqlite:");
  }

  @Test
  void builderOpensOverADataSource() {
    DataSource dataSource = JdbcConnectionPool.create(database(), "", "");
    try (Latchkey a =
            Latchkey.using(
                JdbcBackend.builder(dataSource).createSchema(true).build(),
                LatchkeyOptions.defaults());
        Latchkey b =
            Latchkey.using(JdbcBackend.builder(dataSource).build(), LatchkeyOptions.defaults())) {
      Lease lease = a.lock("shared").tryAcquire().orElseThrow();
      assertThat(b.lock("shared").tryAcquire()).isEmpty();
      assertThat(b.admin().inspect("shared")).isPresent();
      lease.release();
      assertThat(b.lock("shared").tryAcquire()).isPresent().get().satisfies(Lease::release);
    }
  }
}
