package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.LockMode;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.RenewResult;
import io.latchkey.spi.ResourceType;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link UncontendedPath} decides by the lock's resource row alone, on a real PostgreSQL server:
 * its statements are single-row {@code UPDATE}s whose conditions PostgreSQL checks again on the
 * newest version of a row changed meanwhile. Each race test makes another transaction write rows of
 * the lock as the general path does (a holder or queue row, and in the same transaction the
 * resource row: {@code has_rows}, a counter, the sole holder moved into a holder row), and commit
 * only once the uncontended statement waits for the resource row's lock: the statement's snapshot
 * does not show those rows, and only the resource row's newest version tells it. The others check
 * the sole holder's life: moved by the next owner, kept by a fence raise, renewed while it is
 * moved.
 */
class UncontendedPathTest {
  @RegisterExtension static final SqlServers SERVERS = new SqlServers();

  private final String prefix =
      "u" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_";
  private LatchkeyBackend backend;
  private Connection other;
  private Connection admin;

  @BeforeEach
  void open() throws SQLException {
    backend =
        new JdbcBackendProvider()
            .open(
                URI.create(
                    SERVERS.postgres().jdbcUrl()
                        + "&latchkey.createSchema=true&latchkey.tablePrefix="
                        + prefix),
                new BackendContext("uncontended", Duration.ofSeconds(10), Duration.ofSeconds(30)));
    other = DriverManager.getConnection(SERVERS.postgres().jdbcUrl());
    other.setAutoCommit(false);
    admin = DriverManager.getConnection(SERVERS.postgres().jdbcUrl());
  }

  @AfterEach
  void close() throws SQLException {
    other.close();
    admin.close();
    backend.close();
  }

  @Test
  void anAcquireWhoseSnapshotMissedANewHolderIsRefused() throws Exception {
    String name = "missed-holder";
    release(name, "mine", granted(name, "mine")); // creates the resource row
    String key = ResourceKeys.resource(ResourceType.LOCK, name);
    addRow(
        key,
        "fence",
        "holders (res_key, holder_key, holder_id, client_id, shared_holds, exclusive_holds,"
            + " expires_at, token) VALUES (?, ?, 'theirs', 'another-client', 0, 1, 9999999999999,"
            + " 1)",
        "theirs");

    CompletionStage<AcquireResult> attempt = backend.locks().tryAcquire(request(name, "mine"));
    awaitWaitingForTheResourceRow();
    other.commit();

    assertThat(get(attempt).isGranted()).isFalse();
    assertThat(count("SELECT count(*) FROM " + prefix + "holders WHERE res_key = ?", key))
        .isEqualTo(1);
  }

  @Test
  void aReleaseWhoseSnapshotMissedANewWaiterWakesIt() throws Exception {
    String name = "missed-waiter";
    long token = secondGrant(name, "mine");
    String key = ResourceKeys.resource(ResourceType.LOCK, name);
    // The waiter's transaction moves the sole holder first, as every general-path operation does.
    moveSoleHolder(key);
    addRow(
        key,
        "queue_seq",
        "queue (res_key, holder_key, owner, mode, deadline, arrival)"
            + " VALUES (?, ?, 'waiter', 'X', 9999999999999, 1)",
        "waiter");

    CompletionStage<ReleaseResult> release =
        backend
            .locks()
            .release(
                new GrantRef(new HolderRef(ResourceType.LOCK, name, "mine"), token),
                LockMode.EXCLUSIVE);
    awaitWaitingForTheResourceRow();
    other.commit();

    assertThat(get(release).wasHeld()).isTrue();
    // The general path released: it handed the lock to the waiter it found queued.
    assertThat(resourceColumn(key, "woken_owner")).isEqualTo("waiter");
  }

  @Test
  void aFirstHoldIsTheSoleHolderUntilAnotherOwnerComes() throws Exception {
    String name = "sole";
    long token = secondGrant(name, "mine");
    String key = ResourceKeys.resource(ResourceType.LOCK, name);
    assertThat(resourceColumn(key, "sole_holder_id")).isEqualTo("mine");
    assertThat(count("SELECT count(*) FROM " + prefix + "holders WHERE res_key = ?", key)).isZero();

    assertThat(get(backend.locks().tryAcquire(request(name, "theirs"))).isGranted()).isFalse();

    // The other owner's attempt moved the sole holder into a holder row, token and all.
    assertThat(resourceColumn(key, "sole_holder_id")).isNull();
    assertThat(
            count(
                "SELECT count(*) FROM "
                    + prefix
                    + "holders WHERE res_key = ? AND holder_id = 'mine' AND exclusive_holds = 1"
                    + " AND token = "
                    + token,
                key))
        .isEqualTo(1);
    release(name, "mine", token);
    assertThat(get(backend.locks().tryAcquire(request(name, "theirs"))).isGranted()).isTrue();
  }

  @Test
  void aRaisedFenceKeepsTheSoleHolder() throws Exception {
    String name = "sole-raised";
    long token = secondGrant(name, "mine");

    long raised = get(backend.fences().orElseThrow().raiseLockFence(name, token + 1_000));

    assertThat(raised).isGreaterThanOrEqualTo(token + 1_000);
    release(name, "mine", token);
  }

  @Test
  void aRenewalRacingTheMoveOfItsSoleHolderRenewsTheMovedRow() throws Exception {
    String name = "sole-renewed";
    long token = secondGrant(name, "mine");
    String key = ResourceKeys.resource(ResourceType.LOCK, name);
    long before =
        count("SELECT sole_expires_at FROM " + prefix + "resources WHERE res_key = ?", key);
    moveSoleHolder(key);

    CompletionStage<RenewResult> renewal =
        backend.renew(
            List.of(new GrantRef(new HolderRef(ResourceType.LOCK, name, "mine"), token)), 60_000);
    awaitWaitingForTheResourceRow("UPDATE " + prefix + "resources SET sole_expires_at%");
    other.commit();

    assertThat(get(renewal).gone()).isEmpty();
    assertThat(count("SELECT expires_at FROM " + prefix + "holders WHERE res_key = ?", key))
        .isGreaterThan(before);
    release(name, "mine", token);
  }

  /**
   * The lock's first grant, released (which makes its resource row), and then its second, which
   * takes the uncontended path.
   */
  private long secondGrant(String name, String owner) throws Exception {
    release(name, owner, granted(name, owner));
    return granted(name, owner);
  }

  private @Nullable String resourceColumn(String key, String column) throws SQLException {
    try (PreparedStatement select =
        admin.prepareStatement(
            "SELECT " + column + " FROM " + prefix + "resources WHERE res_key = ?")) {
      select.setString(1, key);
      try (ResultSet rs = select.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getString(1);
      }
    }
  }

  private long granted(String name, String owner) throws Exception {
    AcquireResult result = get(backend.locks().tryAcquire(request(name, owner)));
    assertThat(result.isGranted()).isTrue();
    return result.fencingToken();
  }

  private void release(String name, String owner, long token) throws Exception {
    ReleaseResult result =
        get(
            backend
                .locks()
                .release(
                    new GrantRef(new HolderRef(ResourceType.LOCK, name, owner), token),
                    LockMode.EXCLUSIVE));
    assertThat(result.wasHeld()).isTrue();
  }

  private static LockRequest request(String name, String owner) {
    return new LockRequest(name, owner, LockMode.EXCLUSIVE, 30_000, false, 0);
  }

  /**
   * In {@code other}'s open transaction, as the general path moves an exclusive sole holder into a
   * holder row.
   */
  private void moveSoleHolder(String key) throws SQLException {
    update(
        "INSERT INTO "
            + prefix
            + "holders (res_key, holder_key, holder_id, client_id, shared_holds, exclusive_holds,"
            + " expires_at, token) SELECT res_key, sole_holder_key, sole_holder_id, sole_client_id,"
            + " 0, 1, sole_expires_at, sole_token FROM "
            + prefix
            + "resources WHERE res_key = ?",
        key);
    update(
        "UPDATE "
            + prefix
            + "resources SET "
            + SoleHolder.CLEARED
            + ", has_rows = TRUE WHERE res_key = ?",
        key);
  }

  /**
   * In {@code other}'s open transaction, as the general path adds a holder or queue row: the
   * resource row's counter {@code counter} goes up and {@code has_rows} is set, and the row is
   * inserted.
   *
   * @param insert the insert after {@code INSERT INTO <prefix>}, with the resource's key and the
   *     owner's key as its parameters
   */
  private void addRow(String key, String counter, String insert, String owner) throws SQLException {
    update(
        "UPDATE "
            + prefix
            + "resources SET "
            + counter
            + " = "
            + counter
            + " + 1, has_rows = TRUE WHERE res_key = ?",
        key);
    update("INSERT INTO " + prefix + insert, key, ResourceKeys.holder(owner));
  }

  private void update(String sql, String... parameters) throws SQLException {
    try (PreparedStatement statement = other.prepareStatement(sql)) {
      for (int i = 0; i < parameters.length; i++) {
        statement.setString(i + 1, parameters[i]);
      }
      assertThat(statement.executeUpdate()).isEqualTo(1);
    }
  }

  /** Until a statement of the uncontended path waits for the row lock {@code other} holds. */
  private void awaitWaitingForTheResourceRow() {
    awaitWaitingForTheResourceRow("UPDATE " + prefix + "resources %");
  }

  /** Until a statement that matches {@code pattern} (SQL LIKE) waits for a row lock. */
  private void awaitWaitingForTheResourceRow(String pattern) {
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                count(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                            + " AND query LIKE ?",
                        pattern)
                    == 1);
  }

  private long count(String sql, String... parameters) throws SQLException {
    try (PreparedStatement statement = admin.prepareStatement(sql)) {
      for (int i = 0; i < parameters.length; i++) {
        statement.setString(i + 1, parameters[i]);
      }
      try (ResultSet rs = statement.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }
}
