package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.latchkey.servers.FreezableTcpProxy;
import io.latchkey.servers.SqlTestServer;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The backend's own pool ends a borrower's wait for a connection it opens at the borrower's
 * deadline, whatever the driver's own timeouts: a blocking call on the caller's thread has nothing
 * else to end it.
 */
class ConnectionPoolTest {
  @RegisterExtension static final SqlServers SERVERS = new SqlServers();

  /** Far beyond any deadline below: the driver would wait this long for a silent server. */
  private static final String DRIVER_TIMEOUT_SECONDS = "60";

  /**
   * A server that accepts the connection (the kernel completes it) and never answers: pgjdbc waits
   * for its handshake's answer for the whole {@code socketTimeout}.
   */
  @Test
  void openingAConnectionToASilentServerEndsAtTheDeadline() throws Exception {
    try (ServerSocket silent = new ServerSocket(0)) {
      Properties properties = new Properties();
      properties.setProperty("user", "latchkey");
      properties.setProperty("connectTimeout", DRIVER_TIMEOUT_SECONDS);
      properties.setProperty("socketTimeout", DRIVER_TIMEOUT_SECONDS);
      ConnectionPool pool =
          new ConnectionPool(
              "jdbc:postgresql://127.0.0.1:" + silent.getLocalPort() + "/postgres",
              properties,
              2,
              true);
      try {
        assertTimeoutPreemptively(
            Duration.ofSeconds(20),
            () ->
                assertThatThrownBy(
                        () -> pool.borrow(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500)))
                    .isInstanceOf(SQLTimeoutException.class)
                    .hasMessageContaining("deadline"));
      } finally {
        pool.close();
      }
    }
  }

  /**
   * A borrower behind a frozen network gives up at its deadline while the pool's only connection is
   * still opening; once the network is back, that opening ends and the place is the pool's again
   * (the connection itself, or the place given back if it failed): the next borrower gets a working
   * connection, not a pool that counts a place nobody holds.
   */
  @Test
  void aConnectionStillOpeningWhenItsBorrowerGaveUpKeepsThePoolWhole() throws Exception {
    SqlTestServer server = SERVERS.postgres();
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", server.port())) {
      Properties properties = new Properties();
      properties.setProperty("user", "latchkey");
      properties.setProperty("socketTimeout", DRIVER_TIMEOUT_SECONDS);
      ConnectionPool pool =
          new ConnectionPool(
              "jdbc:postgresql://127.0.0.1:" + proxy.port() + "/postgres", properties, 1, true);
      try {
        proxy.freeze();
        assertThatThrownBy(
                () -> pool.borrow(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300)))
            .isInstanceOf(SQLTimeoutException.class);
        proxy.unfreeze();

        Connection next = pool.borrow(System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
        try (Statement statement = next.createStatement();
            ResultSet one = statement.executeQuery("SELECT 1")) {
          assertThat(one.next()).isTrue();
        }
        next.rollback();
        pool.giveBack(next, false);
      } finally {
        proxy.unfreeze();
        pool.close();
      }
    }
  }

  /** A connection that opens in time is the borrower's, and goes back to the pool for the next. */
  @Test
  void aConnectionOpenedInTimeIsLentAndKept() throws Exception {
    Properties properties = new Properties();
    ConnectionPool pool = new ConnectionPool(SERVERS.postgres().jdbcUrl(), properties, 1, true);
    try {
      Connection first = pool.borrow(System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
      assertThat(first.getAutoCommit()).isFalse();
      pool.giveBack(first, false);
      assertThat(pool.borrow(System.nanoTime() + TimeUnit.SECONDS.toNanos(10))).isSameAs(first);
      pool.giveBack(first, false);
    } finally {
      pool.close();
    }
  }
}
