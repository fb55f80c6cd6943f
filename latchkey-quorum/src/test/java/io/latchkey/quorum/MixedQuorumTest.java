package io.latchkey.quorum;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.BackendUnavailableException;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.memory.MemoryLockServer;
import io.latchkey.servers.RedisTestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Quorums whose members are backends of different kinds. Every member must keep a {@link
 * io.latchkey.spi.FenceStore}: today the Redis and in-memory backends do, the JDBC and ZooKeeper
 * backends do not, so a quorum of Redis, PostgreSQL and ZooKeeper members cannot be built yet; the
 * second test pins that refusal (when those backends gain a fence store, it fails and becomes the
 * mixed test the issue asks for).
 */
class MixedQuorumTest {
  private static final LatchkeyOptions OPTIONS = QuorumFixtures.SHORT_LEASES;

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
    Latchkey one = closeAfter(Latchkey.using(mixed.build(), OPTIONS));
    Latchkey two = closeAfter(Latchkey.using(mixed.build(), OPTIONS));

    long last = 0;
    for (int i = 0; i < 4; i++) {
      Latchkey holder = i % 2 == 0 ? one : two;
      Latchkey other = i % 2 == 0 ? two : one;
      Lease lease = holder.lock("mixed").acquire(Duration.ofSeconds(5));
      assertThat(other.lock("mixed").tryLock()).isFalse();
      assertThat(lease.fencingToken()).isGreaterThan(last);
      last = lease.fencingToken();
      lease.release();
    }

    third.kill();
    for (Latchkey client : List.of(one, two)) {
      Lease lease = client.lock("mixed").acquire(Duration.ofSeconds(5));
      assertThat(lease.fencingToken()).isGreaterThan(last);
      last = lease.fencingToken();
      lease.release();
    }
    Lease held = one.lock("mixed").acquire(Duration.ofSeconds(5));
    assertThat(two.lock("mixed").tryLock()).isFalse();

    first.kill();
    // One of three left: no majority. The call fails within its bound (the operation timeout for
    // a try without waiting), and does not hang.
    assertThatThrownBy(() -> two.lock("other").tryLock())
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining("of 3 members");
    // The held grant can no longer be confirmed by a majority: its release says so.
    assertThatThrownBy(held::release)
        .isInstanceOfAny(BackendUnavailableException.class, LeaseLostException.class);
  }

  @Test
  void databaseAndZooKeeperMembersAreRefusedForWantOfAFenceStore() throws Exception {
    RedisTestServer redis = closeAfter(RedisTestServer.start());
    TestingServer zooKeeper =
        closeAfter(new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 200, 0), true));
    String database =
        "jdbc:h2:mem:quorum-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;latchkey.createSchema=true";
    String ensemble = "zookeeper://" + zooKeeper.getConnectString() + "/quorum?sessionTimeout=3s";

    MemoryLockServer memory = closeAfter(new MemoryLockServer());
    for (String member : List.of(database, ensemble)) {
      Quorum.Builder builder =
          Quorum.builder().member(redis.uri()).member(member).member(memory.backend());
      assertThatThrownBy(() -> Latchkey.using(builder.build(), OPTIONS).close())
          .as(member)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("keeps no fence store");
    }
  }
}
