package io.latchkey.quorum;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyObserver;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.servers.FakedClock;
import io.latchkey.servers.FreezableTcpProxy;
import io.latchkey.servers.RedisBinary;
import io.latchkey.servers.RedisTestServer;
import io.latchkey.testkit.WatchdogTally;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Redlock critique's clock jump, on five real redis-servers whose wall clocks a test can step
 * forward ({@link FakedClock}: libfaketime). A member whose clock steps past a lease expires its
 * part of the grant early.
 *
 * <ul>
 *   <li>One jumping member of five that all granted changes nothing: four still hold the grant, no
 *       second client gets in, and the holder's renewals keep its lease.
 *   <li>The critique's case: the holder was granted by exactly three members (two were cut off at
 *       the time), and one of the three jumps. A second client now gets a majority while the first
 *       still believes it holds the lock. Only the fencing token tells them apart (the second's is
 *       larger), and the first learns of its loss at its next renewal. The test measures that
 *       window, which is bounded by the renewal interval, not by the lease.
 * </ul>
 *
 * The figures are in docs/backends/quorum.md ("The Redlock critique").
 */
class RedisQuorumClockJumpTest {
  private static final int MEMBERS = 5;
  private static final Duration JUMP = Duration.ofMinutes(2);

  private final List<FakedClock> clocks = new ArrayList<>();
  private final List<RedisTestServer> servers = new ArrayList<>();
  private final List<AutoCloseable> closeables = new ArrayList<>();

  @BeforeEach
  void startMembersWithMovableClocks(@TempDir Path dir) throws Exception {
    RedisBinary real = FakedClock.redisServer();
    for (int i = 0; i < MEMBERS; i++) {
      FakedClock clock = FakedClock.in(Files.createDirectory(dir.resolve("member-" + i)));
      clocks.add(clock);
      servers.add(
          RedisTestServer.builder().binary(RedisBinary.of(clock.wrap(real.path()))).start());
    }
  }

  @AfterEach
  void stopEverything() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
    servers.forEach(RedisTestServer::close);
  }

  @Test
  void oneJumpingMemberOfFiveChangesNothing() throws Exception {
    WatchdogTally renewals = new WatchdogTally();
    Latchkey holder = open(members(List.of()), Duration.ofSeconds(3), renewals);
    Latchkey other = open(members(List.of()), Duration.ofSeconds(3), LatchkeyObserver.NONE);
    Lease held = holder.lock("jump").acquire(Duration.ZERO);

    clocks.get(0).set(JUMP);

    assertThat(other.lock("jump").tryAcquire())
        .as("one member's clock jumped past the lease: four still hold the grant")
        .isEmpty();
    int before = renewals.renewed();
    await()
        .atMost(10, TimeUnit.SECONDS)
        .untilAsserted(() -> assertThat(renewals.renewed()).isGreaterThanOrEqualTo(before + 2));
    assertThat(held.isValid()).as("renewed on four members of five").isTrue();
    assertThat(renewals.lost()).isZero();
    held.release();
  }

  @Test
  void aJumpUnderAThreeMemberGrantLetsASecondHolderInUntilTheFirstsNextRenewal() throws Exception {
    // The holder reaches members 3 and 4 through proxies that are frozen while it acquires: its
    // grant stands on members 0, 1 and 2 only, as after a brief partition.
    List<FreezableTcpProxy> proxies = new ArrayList<>();
    for (int i = 3; i < MEMBERS; i++) {
      FreezableTcpProxy proxy =
          FreezableTcpProxy.start(servers.get(i).host(), servers.get(i).port());
      closeables.add(proxy);
      proxies.add(proxy);
    }
    Duration renewInterval = Duration.ofSeconds(4);
    WatchdogTally renewals = new WatchdogTally();
    Latchkey holder = open(members(proxies), renewInterval.multipliedBy(3), renewals);
    Latchkey intruder = open(members(List.of()), Duration.ofSeconds(30), LatchkeyObserver.NONE);
    proxies.forEach(FreezableTcpProxy::freeze);
    Lease held = holder.lock("jump").acquire(Duration.ofSeconds(5));
    CompletableFuture<Long> lostAt = new CompletableFuture<>();
    held.onLost(e -> lostAt.complete(System.nanoTime()));

    // Right after a renewal, so that the next one (which finds the loss) comes a whole interval
    // after the second grant, however slow the machine.
    renewals.awaitNextRenewal();
    long jumpedAt = System.nanoTime();
    clocks.get(0).set(JUMP);
    Optional<Lease> second = intruder.lock("jump").tryAcquire();
    long secondAt = System.nanoTime();

    assertThat(second).as("members 0, 3 and 4 grant the second client: a majority").isPresent();
    assertThat(held.isValid()).as("the first holder still believes it holds the lock").isTrue();
    assertThat(second.orElseThrow().fencingToken())
        .as("only the fencing token tells them apart: a fenced resource refuses the first")
        .isGreaterThan(held.fencingToken());

    long lost = lostAt.get(renewInterval.toSeconds() + 10, TimeUnit.SECONDS);
    Duration overlap = Duration.ofNanos(lost - secondAt);
    System.out.printf(
        "clock jump under a three-member grant: second grant %d ms after the jump; the first"
            + " holder learned of its loss %d ms after the second grant (renewal every %d s)%n",
        TimeUnit.NANOSECONDS.toMillis(secondAt - jumpedAt),
        overlap.toMillis(),
        renewInterval.toSeconds());
    assertThat(overlap)
        .as("the first holder learns of its loss by its next renewal")
        .isLessThan(renewInterval.plusSeconds(5));
    assertThat(renewals.lost()).isEqualTo(1);
    assertThatThrownBy(held::release).isInstanceOf(LeaseLostException.class);
    second.orElseThrow().release();
  }

  /** Member URIs: direct, except members 3 and 4 through {@code proxies} when given. */
  private String members(List<FreezableTcpProxy> proxies) {
    List<String> uris = new ArrayList<>();
    for (int i = 0; i < MEMBERS; i++) {
      int proxied = i - (MEMBERS - proxies.size());
      uris.add(
          proxied >= 0
              ? "redis://" + proxies.get(proxied).host() + ":" + proxies.get(proxied).port()
              : servers.get(i).uri());
    }
    return "quorum:" + uris.stream().collect(Collectors.joining(",")) + ";maxLease=1m";
  }

  private Latchkey open(String uri, Duration lease, LatchkeyObserver observer) {
    Latchkey latchkey =
        Latchkey.connect(
            uri,
            LatchkeyOptions.builder()
                .leaseTime(lease)
                .renewInterval(lease.dividedBy(3))
                .operationTimeout(Duration.ofSeconds(2))
                .closeOnShutdown(false)
                .observer(observer)
                .build());
    closeables.add(latchkey);
    return latchkey;
  }
}
