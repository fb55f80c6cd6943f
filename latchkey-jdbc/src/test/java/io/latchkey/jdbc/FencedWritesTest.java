package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcConnectionPool;
import org.junit.jupiter.api.Test;

/** A paused holder's late write is refused by the row's fence. */
class FencedWritesTest {
  private static final FencedWrites ACCOUNTS = FencedWrites.on("accounts", "id", "fence");

  @Test
  void lateWriteOfAPausedHolderIsRefused() throws Exception {
    String url = "jdbc:h2:mem:fenced-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
    DataSource dataSource = JdbcConnectionPool.create(url, "", "");
    try (Connection connection = dataSource.getConnection();
        Statement ddl = connection.createStatement()) {
      ddl.execute("CREATE TABLE accounts (id INT PRIMARY KEY, balance INT, fence BIGINT)");
      ddl.execute("INSERT INTO accounts VALUES (1, 0, 0)");
    }
    try (Latchkey paused = Latchkey.connect(url + ";latchkey.createSchema=true");
        Latchkey live = Latchkey.connect(url)) {
      // The first holder takes a short lease and then "pauses": its lease runs out unseen.
      Lease stale = paused.lock("account-1").acquire(Duration.ZERO, Duration.ofMillis(200));
      DistributedLock liveLock = live.lock("account-1");
      AtomicReference<Lease> taken = new AtomicReference<>();
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () -> {
                Optional<Lease> lease = liveLock.tryAcquire();
                lease.ifPresent(taken::set);
                return lease.isPresent();
              });
      Lease fresh = java.util.Objects.requireNonNull(taken.get());
      assertThat(fresh.fencingToken()).isGreaterThan(stale.fencingToken());

      try (Connection connection = dataSource.getConnection()) {
        assertThat(ACCOUNTS.update(connection, 1, fresh.fencingToken(), Map.of("balance", 100)))
            .isTrue();
        assertThat(ACCOUNTS.update(connection, 1, stale.fencingToken(), Map.of("balance", 7)))
            .as("the paused holder's late write")
            .isFalse();
        assertThat(balance(connection)).isEqualTo(100);
      }
      fresh.release();
    }
  }

  @Test
  void namesMustBePlainIdentifiers() {
    assertThatThrownBy(() -> FencedWrites.on("accounts; DROP TABLE x", "id", "fence"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("table");
    assertThat(ACCOUNTS.updateSql(List.of("balance")))
        .isEqualTo("UPDATE accounts SET balance = ?, fence = ? WHERE id = ? AND fence < ?");
  }

  private static int balance(Connection connection) throws SQLException {
    try (Statement select = connection.createStatement();
        ResultSet rs = select.executeQuery("SELECT balance FROM accounts WHERE id = 1")) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
