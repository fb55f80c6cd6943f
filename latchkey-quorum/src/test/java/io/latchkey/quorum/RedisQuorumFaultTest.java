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
import io.latchkey.servers.RedisTestServer;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A quorum of five redis-server processes under member faults: members killed, restarted empty,
 * frozen (SIGSTOP) and behind a frozen proxy. Each test starts its own five servers.
 *
 * <p>Behind {@code -Psoak}: each test restarts or freezes servers and waits out leases (about 35 s
 * in all).
 */
@Tag("slow")
class RedisQuorumFaultTest {
  private static final LatchkeyOptions OPTIONS = QuorumFixtures.SHORT_LEASES;

  private @Nullable RedisQuorum servers;
  private final List<AutoCloseable> opened = new ArrayList<>();
  private final List<RedisTestServer> stopped = new ArrayList<>();

  @BeforeEach
  void startServers() {
    servers = RedisQuorum.start(5);
  }

  @AfterEach
  void stopServers() throws Exception {
    for (RedisTestServer frozen : stopped) {
      signal("CONT", frozen);
    }
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
    servers().close();
  }

  private RedisQuorum servers() {
    if (servers == null) {
      throw new IllegalStateException("the redis-servers have not been started");
    }
    return servers;
  }

  private Latchkey client(String quorumOptions) {
    return closeAfter(Latchkey.connect(servers().uri(quorumOptions), OPTIONS));
  }

  private <T extends AutoCloseable> T closeAfter(T closeable) {
    opened.add(closeable);
    return closeable;
  }

  @Test
  void withTwoMembersDownLocksAreStillGrantedAndKept() throws InterruptedException {
    Latchkey holder = client(";maxLease=5s");
    Lease lease = holder.lock("two-down").acquire(Duration.ofSeconds(5));
    servers().member(0).kill();
    servers().member(3).kill();

    // Renewed by the three members left, past several leases.
    await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(10)).until(lease::isValid);
    Latchkey other = client(";maxLease=5s");
    assertThat(other.lock("two-down").tryLock()).isFalse();
    lease.release();
    assertThat(other.lock("two-down").tryLock()).isTrue();
    other.lock("two-down").unlock();
  }

  @Test
  void withThreeMembersDownCallsFailClearlyAndHeldLeasesAreLost() throws InterruptedException {
    Latchkey holder = client(";maxLease=5s");
    Lease lease = holder.lock("three-down").acquire(Duration.ofSeconds(5));
    List<LeaseLostException> lost = new CopyOnWriteArrayList<>();
    lease.onLost(lost::add);
    Latchkey other = client(";maxLease=5s");
    for (int i = 0; i < 3; i++) {
      servers().member(i).kill();
    }

    await().atMost(Duration.ofSeconds(10)).until(() -> !lost.isEmpty());
    assertThat(lease.isValid()).isFalse();
    assertThatThrownBy(() -> other.lock("three-down").tryLock(Duration.ofSeconds(1)))
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining("of 5 members");
    assertThatThrownBy(() -> other.lock("another").tryLock())
        .isInstanceOf(BackendUnavailableException.class);
  }

  @Test
  void aMemberRestartedEmptyInsideTheLeaseDoesNotEnableASecondGrant() throws InterruptedException {
    Latchkey holder = client(";maxLease=20s");
    Lease lease = holder.lock("restarted").acquire(Duration.ZERO, Duration.ofSeconds(15));
    // A majority forgets the grant: without the restart rule another client would get it.
    for (int i = 0; i < 3; i++) {
      servers().member(i).restart();
    }

    Latchkey other = client(";maxLease=20s");
    assertThat(other.lock("restarted").tryLock(Duration.ofMillis(500))).isFalse();
    assertThat(lease.isValid()).isTrue();
    // Only two members still record the grant: a grant fewer than a majority record is lost, as a
    // renewal would have found (docs/backends/quorum.md), and the release says so.
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void fencingTokensKeepGrowingWhenMembersDieRestartEmptyOrFreeze() throws Exception {
    // A quarantine of 2 s, so that restarted members come back into the majority during the test.
    String options = ";maxLease=2s";
    long last = 0;
    List<Long> tokens = new ArrayList<>();
    for (int round = 0; round < 9; round++) {
      Latchkey client = client(options);
      Lease lease = client.lock("fenced").acquire(Duration.ofSeconds(15));
      tokens.add(lease.fencingToken());
      assertThat(lease.fencingToken()).as("tokens %s", tokens).isGreaterThan(last);
      last = lease.fencingToken();
      lease.release();
      switch (round % 3) {
        case 0 -> servers().member(round % 5).restart();
        case 1 -> {
          servers().member(round % 5).kill();
          servers().member((round + 2) % 5).restart();
          servers().member(round % 5).restart();
        }
        default -> {
          // Grants go on without it (its counter falls behind), then it comes back as it was.
          RedisTestServer frozen = servers().member((round + 1) % 5);
          freeze(frozen);
          Lease during = client.lock("fenced").acquire(Duration.ofSeconds(15));
          tokens.add(during.fencingToken());
          assertThat(during.fencingToken()).as("tokens %s", tokens).isGreaterThan(last);
          last = during.fencingToken();
          during.release();
          thaw(frozen);
        }
      }
    }
  }

  @Test
  void aFrozenMemberAndAMemberBehindAFrozenProxyDoNotStopTheQuorum() throws Exception {
    FreezableTcpProxy proxy =
        closeAfter(FreezableTcpProxy.start(servers().member(1).host(), servers().member(1).port()));
    List<String> members = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      RedisTestServer server = servers().member(i);
      members.add(i == 1 ? "redis://" + proxy.host() + ":" + proxy.port() : server.uri());
    }
    String uri = "quorum:" + String.join(",", members) + ";maxLease=5s";
    Latchkey first = closeAfter(Latchkey.connect(uri, OPTIONS));
    Latchkey second = closeAfter(Latchkey.connect(uri, OPTIONS));
    freeze(servers().member(0));
    proxy.freeze();

    Lease lease = first.lock("frozen").acquire(Duration.ofSeconds(5));
    assertThat(second.lock("frozen").tryLock()).isFalse();
    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(8)).until(lease::isValid);
    long token = lease.fencingToken();
    lease.release();
    Lease next = second.lock("frozen").acquire(Duration.ofSeconds(5));
    assertThat(next.fencingToken()).isGreaterThan(token);
    next.release();
  }

  @Test
  void aMixedQuorumOfRedisAndInMemoryMembersLocksAndSurvivesTwoRedisCrashes()
      throws InterruptedException {
    MemoryLockServer firstMemory = closeAfter(new MemoryLockServer());
    MemoryLockServer secondMemory = closeAfter(new MemoryLockServer());
    Quorum.Builder mixed =
        Quorum.builder()
            .member(servers().member(0).uri())
            .member(servers().member(1).uri())
            .member(servers().member(2).uri())
            .member(firstMemory.backend())
            .member(secondMemory.backend())
            .maxLease(Duration.ofSeconds(5));
    Latchkey first = closeAfter(Latchkey.using(mixed.build(), OPTIONS));
    Latchkey second = closeAfter(Latchkey.using(mixed.build(), OPTIONS));

    Lease lease = first.lock("mixed").acquire(Duration.ofSeconds(5));
    assertThat(second.lock("mixed").tryLock()).isFalse();
    servers().member(0).kill();
    servers().member(1).kill();
    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(8)).until(lease::isValid);
    assertThat(first.admin().inspect("mixed"))
        .hasValueSatisfying(
            info ->
                assertThat(info.holders().get(0).fencingToken()).isEqualTo(lease.fencingToken()));
    // Another client sees the holder, and of its token only what a majority of the members record
    // (the in-memory members' own counters sit far below the Redis member's clock-based token).
    assertThat(second.admin().inspect("mixed"))
        .hasValueSatisfying(
            info -> {
              assertThat(info.holders()).hasSize(1);
              assertThat(info.holders().get(0).fencingToken())
                  .isLessThanOrEqualTo(lease.fencingToken());
            });
    long token = lease.fencingToken();
    lease.release();
    Optional<Lease> next = second.lock("mixed").tryAcquire();
    assertThat(next).hasValueSatisfying(l -> assertThat(l.fencingToken()).isGreaterThan(token));
    next.orElseThrow().release();
  }

  private void freeze(RedisTestServer server) throws IOException, InterruptedException {
    signal("STOP", server);
    stopped.add(server);
  }

  private void thaw(RedisTestServer server) throws IOException, InterruptedException {
    signal("CONT", server);
    stopped.remove(server);
  }

  private static void signal(String signal, RedisTestServer server)
      throws IOException, InterruptedException {
    long pid = server.pid().orElseThrow();
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
    assertThat(kill.waitFor()).as("kill -%s %s", signal, pid).isZero();
  }
}
