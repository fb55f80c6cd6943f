package io.latchkey.quorum;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.BackendUnavailableException;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.memory.MemoryLockServer;
import io.latchkey.servers.FreezableTcpProxy;
import io.latchkey.servers.PostgresTestServer;
import io.latchkey.servers.RedisTestServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Quorums whose members are backends of different kinds. Every member must keep a {@link
 * io.latchkey.spi.FenceStore}: the Redis, in-memory, JDBC and ZooKeeper backends do. A database
 * member that lost its data, or a ZooKeeper ensemble that came back without it, sits out its
 * quarantine, as a Redis member restarted empty does (docs/adr/0009-quorum-fencing.md).
 */
class MixedQuorumTest {
  private static final LatchkeyOptions OPTIONS = QuorumFixtures.SHORT_LEASES;
  private static final Duration QUARANTINE = Duration.ofSeconds(5);
  private static final String CREATE_SCHEMA = ";latchkey.createSchema=true";

  private final List<AutoCloseable> opened = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
  }

  private <T extends AutoCloseable> T closeAfter(T closeable) {
    opened.add(closeable);
    return closeable;
  }

  @Test
  void redisAndInMemoryMembersGrantWithGrowingTokensWhileTwoOfThreeWork()
      throws InterruptedException {
    RedisTestServer first = closeAfter(RedisTestServer.start());
    MemoryLockServer memory = closeAfter(new MemoryLockServer());
    RedisTestServer third = closeAfter(RedisTestServer.start());
    Quorum.Builder mixed =
        Quorum.builder()
            .member(first.uri())
            .member(memory.backend())
            .member(third.uri())
            .maxLease(Duration.ofSeconds(5));
    assertMajorityRule(mixed, third::kill, first::kill);
  }

  @Test
  void redisPostgresAndH2MembersGrantWithGrowingTokensWhileTwoOfThreeWork()
      throws InterruptedException {
    RedisTestServer redis = closeAfter(RedisTestServer.start());
    PostgresTestServer postgres = closeAfter(PostgresTestServer.start());
    Quorum.Builder mixed =
        Quorum.builder()
            .member(redis.uri())
            .member(postgres.jdbcUrl() + "&latchkey.mode=table&latchkey.createSchema=true")
            .member(h2Database())
            .maxLease(Duration.ofSeconds(5));
    assertMajorityRule(mixed, redis::kill, postgres::kill);
  }

  /**
   * Two clients of a quorum of three members: grants with growing tokens, one client at a time,
   * while three and then two members work; with one, a call fails within its bound (the operation
   * timeout for a try without waiting) and does not hang, and a held grant can no longer be
   * confirmed by a majority, which its release says.
   */
  private void assertMajorityRule(Quorum.Builder mixed, Runnable stopOne, Runnable stopAnother)
      throws InterruptedException {
    // Calls of 3 s (members answer within 40 % of that): a database member behind a JDBC pool
    // missed the 400 ms of a 1 s call once on a loaded machine.
    LatchkeyOptions options = OPTIONS.toBuilder().operationTimeout(Duration.ofSeconds(3)).build();
    Latchkey one = closeAfter(Latchkey.using(mixed.build(), options));
    Latchkey two = closeAfter(Latchkey.using(mixed.build(), options));
    long last = alternateGrants(one, two, "mixed", 0);
    stopOne.run();
    last = alternateGrants(one, two, "mixed", last);
    Lease held = one.lock("mixed").acquire(Duration.ofSeconds(5));
    assertThat(held.fencingToken()).isGreaterThan(last);
    assertThat(two.lock("mixed").tryLock()).isFalse();

    stopAnother.run();
    assertThatThrownBy(() -> two.lock("other").tryLock())
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining("of 3 members");
    assertThatThrownBy(held::release)
        .isInstanceOfAny(BackendUnavailableException.class, LeaseLostException.class);
  }

  @Test
  void aDatabaseMemberThatLostItsDataIsQuarantined() throws InterruptedException {
    RedisTestServer redis = closeAfter(RedisTestServer.start());
    MemoryLockServer memory = closeAfter(new MemoryLockServer());
    Latchkey one = closeAfter(redisMemoryAndNewH2(redis, memory));
    long before = alternateGrants(one, one, "lost", 0);

    // The database member comes back without its data: to the quorum, a fresh database in its
    // place is the same (no tables of its own, no epoch record; createSchema makes them empty).
    // The new client reads every member's epoch when it opens, and gives the empty one a new epoch
    // with a quarantine of maxLease by the database's clock.
    Latchkey two = closeAfter(redisMemoryAndNewH2(redis, memory));
    // With the in-memory member gone, the database member would make a majority with the Redis
    // one; but its grants do not count while its quarantine lasts: refused (a split vote).
    memory.close();
    assertThat(two.lock("lost").tryLock()).isFalse();

    // After it, the two members grant again, with a token above every earlier one: the database
    // member's new epoch is above the others'.
    Lease after = two.lock("lost").acquire(Duration.ofSeconds(30));
    assertThat(after.fencingToken()).isGreaterThan(before);
    after.release();
  }

  /** A client of a quorum of the Redis member, the in-memory one and a new H2 database. */
  private static Latchkey redisMemoryAndNewH2(RedisTestServer redis, MemoryLockServer memory) {
    return Latchkey.using(
        Quorum.builder()
            .member(redis.uri())
            .member(memory.backend())
            .member(h2Database())
            .maxLease(QUARANTINE)
            .build(),
        OPTIONS);
  }

  /** Grants the lock four times, to the two clients in turn; each token is above the last. */
  private static long alternateGrants(Latchkey one, Latchkey two, String name, long after)
      throws InterruptedException {
    long last = after;
    for (int i = 0; i < 4; i++) {
      Latchkey holder = i % 2 == 0 ? one : two;
      Latchkey other = i % 2 == 0 ? two : one;
      Lease lease = holder.lock(name).acquire(Duration.ofSeconds(5));
      if (other != holder) {
        assertThat(other.lock(name).tryLock()).isFalse();
      }
      assertThat(lease.fencingToken()).isGreaterThan(last);
      last = lease.fencingToken();
      lease.release();
    }
    return last;
  }

  private static String h2Database() {
    return "jdbc:h2:mem:quorum-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1" + CREATE_SCHEMA;
  }

  @Test
  void redisH2AndZooKeeperMembersGrantWithGrowingTokensWhileTwoOfThreeWork() throws Exception {
    RedisTestServer redis = closeAfter(RedisTestServer.start());
    TestingServer zooKeeper = closeAfter(zooKeeperServer(-1));
    Quorum.Builder mixed =
        Quorum.builder()
            .member(redis.uri())
            .member(h2Database())
            .member(ensemble(zooKeeper))
            .maxLease(Duration.ofSeconds(5));
    assertMajorityRule(mixed, () -> stop(zooKeeper), redis::kill);
  }

  @Test
  void aZooKeeperMemberThatComesBackEmptyIsQuarantined() throws Exception {
    RedisTestServer redis = closeAfter(RedisTestServer.start());
    MemoryLockServer memory = closeAfter(new MemoryLockServer());
    TestingServer zooKeeper = zooKeeperServer(-1);
    String ensemble = ensemble(zooKeeper);
    Latchkey one = closeAfter(redisMemoryAnd(redis, memory, ensemble));
    long before = alternateGrants(one, one, "lost", 0);

    // The ensemble comes back at its address without its data: its zxids start over, below the
    // tokens it handed out, and its epoch record is gone. A new client reads every member's epoch
    // when it opens, and gives the empty one a new epoch with a quarantine of maxLease by the
    // ensemble's clock.
    int port = zooKeeper.getPort();
    zooKeeper.close();
    closeAfter(zooKeeperServer(port));
    Latchkey two = closeAfter(redisMemoryAnd(redis, memory, ensemble));
    // Granted by the Redis and in-memory members; the empty one answers too (on a loaded machine
    // the first call to a new server may take a while), and does not count.
    Lease meanwhile = two.lock("lost").acquire(Duration.ofSeconds(10));
    assertThat(meanwhile.fencingToken()).isGreaterThan(before);
    meanwhile.release();
    // Without the in-memory member, the ZooKeeper member would make a majority with the Redis one;
    // but its grants do not count while its quarantine lasts: refused (a split vote).
    memory.close();
    assertThat(two.lock("lost").tryLock()).isFalse();

    // After it, the two members grant again, with a token above every earlier one: the ZooKeeper
    // member's new epoch is above the others'.
    Lease after = two.lock("lost").acquire(Duration.ofSeconds(30));
    assertThat(after.fencingToken()).isGreaterThan(before);
    after.release();
  }

  /**
   * A client that keeps running while a member comes back empty gives it a new epoch record, even
   * when that member's answers come after the attempts were decided by the others (a new ensemble's
   * first answers are slow): without it, the member would never count again for that client.
   */
  @Test
  void aRunningClientSeedsAZooKeeperMemberThatCameBackEmpty() throws Exception {
    RedisTestServer redis = closeAfter(RedisTestServer.start());
    MemoryLockServer memory = closeAfter(new MemoryLockServer());
    TestingServer zooKeeper = zooKeeperServer(-1);
    // Behind 150 ms each way, the ZooKeeper member answers after the other two decided.
    FreezableTcpProxy slow =
        closeAfter(
            FreezableTcpProxy.start("127.0.0.1", zooKeeper.getPort(), Duration.ofMillis(150)));
    String ensemble =
        "zookeeper://" + slow.host() + ":" + slow.port() + "/quorum?sessionTimeout=3s";
    Latchkey client = closeAfter(redisMemoryAnd(redis, memory, ensemble));
    alternateGrants(client, client, "seeded", 0);

    int port = zooKeeper.getPort();
    zooKeeper.close();
    TestingServer empty = closeAfter(zooKeeperServer(port));
    try (CuratorFramework look =
        CuratorFrameworkFactory.newClient(empty.getConnectString(), new RetryOneTime(100))) {
      look.start();
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () -> {
                client.lock("seeded").acquire(Duration.ofSeconds(10)).release();
                return look.checkExists().forPath("/quorum/epoch") != null;
              });
    }
  }

  /**
   * A client of a quorum of the Redis member, the in-memory one and a ZooKeeper ensemble, with a
   * quarantine of 10 s and calls that may take 5 s: a new ensemble's first answers can be slow.
   */
  private static Latchkey redisMemoryAnd(
      RedisTestServer redis, MemoryLockServer memory, String ensemble) {
    return Latchkey.using(
        Quorum.builder()
            .member(redis.uri())
            .member(memory.backend())
            .member(ensemble)
            .maxLease(Duration.ofSeconds(10))
            .build(),
        OPTIONS.toBuilder().operationTimeout(Duration.ofSeconds(5)).build());
  }

  /** A ZooKeeper server with a short tick on a free port, or on {@code port}, with new data. */
  private static TestingServer zooKeeperServer(int port) throws Exception {
    return new TestingServer(new InstanceSpec(null, port, -1, -1, true, -1, 200, 0), true);
  }

  private static String ensemble(TestingServer zooKeeper) {
    return "zookeeper://" + zooKeeper.getConnectString() + "/quorum?sessionTimeout=3s";
  }

  private static void stop(TestingServer zooKeeper) {
    try {
      zooKeeper.stop();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
