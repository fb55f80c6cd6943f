package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.BackendTimeoutException;
import io.latchkey.DistributedLock;
import io.latchkey.DistributedSemaphore;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LeasedSemaphore;
import io.latchkey.LockInfo;
import io.latchkey.servers.FreezableTcpProxy;
import io.latchkey.servers.RedisTestServer;
import io.latchkey.testkit.LeaseTransitions;
import io.latchkey.testkit.LostHandOverReply;
import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Answers that come late or never, on a real Redis stalled with {@code CLIENT PAUSE} (the stand-in
 * for a server stall, a long GC pause of Redis, or a slow network): the engine undoes exactly what
 * a late answer proves was granted, never hands out a grant that came back after its lease, and
 * reports a lost lease at its deadline.
 */
class RedisUncertaintyTest {
  @RegisterExtension static final RedisServerExtension REDIS = new RedisServerExtension();

  private static final AtomicLong NAMES = new AtomicLong();

  /**
   * The operation timeout of the clients whose calls must time out during a stall: short, yet long
   * enough for a connect on a loaded machine (it bounds the connect too).
   */
  private static final Duration SHORT_TIMEOUT = Duration.ofSeconds(1);

  /** A stall that outlasts {@link #SHORT_TIMEOUT} by far, so a call made in it times out. */
  private static final Duration LONGER_STALL = Duration.ofMillis(2500);

  @AfterEach
  void unpause() {
    redis().command("CLIENT", "UNPAUSE");
  }

  private static RedisTestServer redis() {
    return REDIS.server();
  }

  private Latchkey connect(UnaryOperator<LatchkeyOptions.Builder> tweaks) {
    return connect(redis().uri(), tweaks);
  }

  /** A proxy in front of the test's Redis, closed after the test. */
  private static FreezableTcpProxy proxyToRedis() throws IOException {
    return REDIS.closeAfterTest(FreezableTcpProxy.start(redis().host(), redis().port()));
  }

  /** A client whose every connection to Redis goes through {@code proxy}. */
  private Latchkey connectThrough(
      FreezableTcpProxy proxy, UnaryOperator<LatchkeyOptions.Builder> tweaks) {
    return connect("redis://" + proxy.host() + ":" + proxy.port(), tweaks);
  }

  private Latchkey connect(String uri, UnaryOperator<LatchkeyOptions.Builder> tweaks) {
    LatchkeyOptions.Builder options =
        LatchkeyOptions.builder()
            .leaseTime(Duration.ofSeconds(2))
            .renewInterval(Duration.ofMillis(300))
            .operationTimeout(Duration.ofSeconds(2))
            .recheckInterval(Duration.ofMillis(100))
            .closeOnShutdown(false);
    return REDIS.closeAfterTest(Latchkey.connect(uri, tweaks.apply(options).build()));
  }

  private static String uniqueName(String prefix) {
    return "uncertain/" + prefix + "/" + NAMES.incrementAndGet();
  }

  /** Stalls every command of every client (scripts included) for {@code millis}. */
  private static void pauseRedis(long millis) {
    redis().command("CLIENT", "PAUSE", Long.toString(millis), "ALL");
  }

  private static Optional<LockInfo> inspect(Latchkey client, String name) {
    return client.admin().inspect(name);
  }

  /**
   * Issue 8, item 1: an explicit-lease grant whose answer arrives after its lease is undone on the
   * server and never handed out; the acquire goes on and gets a fresh grant; the application never
   * sees one fencing token twice, and its unlock frees the lock for everyone.
   */
  @Test
  void aGrantThatArrivesAfterItsLeaseIsUndoneAndNeverHandedOut() throws Exception {
    Latchkey client = connect(UnaryOperator.identity());
    Latchkey other = connect(UnaryOperator.identity());
    String name = uniqueName("late-grant");
    DistributedLock lock = client.lock(name);
    Set<Long> tokensSeen = new HashSet<>();
    for (int round = 0; round < 3; round++) {
      pauseRedis(500);
      Lease lease = lock.acquire(Duration.ofSeconds(5), Duration.ofMillis(300));
      assertThat(lease.isValid()).as("a handed-out lease is valid").isTrue();
      assertThat(tokensSeen.add(lease.fencingToken()))
          .as("fencing token %s was handed out before", lease.fencingToken())
          .isTrue();
      assertThat(inspect(other, name).orElseThrow().holders())
          .singleElement()
          .satisfies(holder -> assertThat(holder.holds()).as("no orphaned hold").isEqualTo(1));
      lease.release();
      assertThat(other.lock(name).tryLock()).as("the lock is free after release").isTrue();
      other.lock(name).unlock();
    }
  }

  /**
   * Issue 8, item 2: a lock acquire that timed out while Redis stalled is granted when Redis goes
   * on; the late answer is kept and that grant is released, so the lock does not stay held by
   * nobody's knowledge for a whole watchdog lease.
   */
  @Test
  void aLockGrantedAfterTheCallTimedOutIsReleased() {
    Latchkey client =
        connect(
            options ->
                options
                    .operationTimeout(SHORT_TIMEOUT)
                    .leaseTime(Duration.ofSeconds(30))
                    .renewInterval(Duration.ofSeconds(10)));
    Latchkey other = connect(UnaryOperator.identity());
    String name = uniqueName("late-lock");
    // Loads the scripts: a NOSCRIPT fallback would re-send a script after the probes below.
    client.lock(name).lock();
    assertThat(inspect(client, name)).isPresent();
    client.lock(name).unlock();

    pauseRedis(LONGER_STALL.toMillis());
    assertThatThrownBy(() -> client.lock(name).acquire(Duration.ofSeconds(5)))
        .isInstanceOf(BackendTimeoutException.class);

    // Probes on the same client's connection run after the stalled acquire. Without the undo, the
    // late grant would keep the lock for its 30 s watchdog lease.
    await()
        .atMost(Duration.ofSeconds(5))
        .ignoreExceptions()
        .until(() -> inspect(client, name).isEmpty());
    assertThat(other.lock(name).tryLock()).isTrue();
  }

  /** Issue 8, item 2: permits taken by a timed-out tryAcquire are given back, once. */
  @Test
  void semaphorePermitsTakenAfterTheCallTimedOutAreGivenBack() {
    Latchkey client = connect(options -> options.operationTimeout(SHORT_TIMEOUT));
    String name = uniqueName("late-permits");
    DistributedSemaphore semaphore = client.semaphore(name);
    semaphore.trySetPermits(5);
    // Loads the scripts: a NOSCRIPT fallback would re-send a script after the probes below.
    assertThat(semaphore.tryAcquire(1)).isTrue();
    semaphore.release(1);

    pauseRedis(LONGER_STALL.toMillis());
    assertThatThrownBy(() -> semaphore.tryAcquire(2)).isInstanceOf(BackendTimeoutException.class);

    List<Integer> seen = new CopyOnWriteArrayList<>();
    await()
        .atMost(Duration.ofSeconds(5))
        .ignoreExceptions()
        .until(
            () -> {
              int available = semaphore.availablePermits();
              seen.add(available);
              return available == 5;
            });
    assertThat(semaphore.tryAcquire(5)).as("permits seen: %s", seen).isTrue();
  }

  /** Issue 8, item 2: a leased permit granted after the call timed out is released by its id. */
  @Test
  void aLeasedPermitGrantedAfterTheCallTimedOutIsReleased() throws InterruptedException {
    Latchkey client = connect(options -> options.operationTimeout(SHORT_TIMEOUT));
    String name = uniqueName("late-permit");
    LeasedSemaphore semaphore = client.leasedSemaphore(name);
    semaphore.trySetPermits(1);
    semaphore.acquire(Duration.ZERO, Duration.ofSeconds(30)).release();

    pauseRedis(LONGER_STALL.toMillis());
    assertThatThrownBy(() -> semaphore.acquire(Duration.ofSeconds(5), Duration.ofSeconds(30)))
        .isInstanceOf(BackendTimeoutException.class);

    await()
        .atMost(Duration.ofSeconds(5))
        .ignoreExceptions()
        .until(() -> semaphore.availablePermits() == 1);
  }

  /**
   * Issue 8, item 7: a watchdog lease whose renewal cannot get through turns invalid at its
   * deadline and its listeners hear it then (suspended: a renewal is on its way, so the grant is in
   * doubt), not when the renewal call finally fails; it is lost once the renewal answers that the
   * grant lapsed.
   */
  @Test
  void aStalledRenewalIsHeardAtTheDeadlineAndLosesTheLease() throws Exception {
    Latchkey client =
        connect(
            options ->
                options
                    .leaseTime(Duration.ofMillis(600))
                    .renewInterval(Duration.ofMillis(200))
                    .operationTimeout(Duration.ofSeconds(5)));
    Lease lease = client.lock(uniqueName("deadline")).acquire(Duration.ZERO);
    List<String> heard = LeaseTransitions.of(lease);

    pauseRedis(2500);
    await().atMost(Duration.ofMillis(1500)).until(() -> heard.contains("suspended"));
    assertThat(lease.isValid()).isFalse();
    assertThat(heard).doesNotContain("lost");
    // When Redis goes on, the renewal on its way finds the grant lapsed.
    await().atMost(Duration.ofSeconds(6)).until(() -> heard.contains("lost"));
    assertThat(heard).doesNotContain("resumed");
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
  }

  /** A lock held through a proxy that was then frozen, and what its lease's listeners heard. */
  private record Suspended(FreezableTcpProxy proxy, String name, Lease lease, List<String> heard) {}

  /**
   * Takes a lock with a watchdog client through a proxy (a 4 s lease renewed every 2 s, calls
   * bounded at 5 s, so a renewal sent 2 s before the deadline is still on its way when the deadline
   * passes), freezes the proxy with {@code freeze}, and waits until the lease is suspended.
   */
  private Suspended suspendedBehindAFrozenProxy(String prefix, Consumer<FreezableTcpProxy> freeze)
      throws Exception {
    FreezableTcpProxy proxy = proxyToRedis();
    Latchkey client =
        connectThrough(
            proxy,
            options ->
                options
                    .leaseTime(Duration.ofSeconds(4))
                    .renewInterval(Duration.ofSeconds(2))
                    .operationTimeout(Duration.ofSeconds(5)));
    String name = uniqueName(prefix);
    Lease lease = client.lock(name).acquire(Duration.ZERO);
    List<String> heard = LeaseTransitions.of(lease);

    freeze.accept(proxy);
    await().atMost(Duration.ofSeconds(6)).until(() -> heard.contains("suspended"));
    assertThat(lease.isValid()).isFalse();
    return new Suspended(proxy, name, lease, heard);
  }

  /**
   * ADR 0003 (2026-11-27): a release that hands the lock over to a waiter of the same client, whose
   * reply is lost (Redis applied it: only the replies are held, past the operation timeout). The
   * release fails within its bound; the waiter, told nothing was handed over, tries by itself. If
   * that attempt's reply comes in time, the waiter finds the grant Redis made for it and holds the
   * lock once (the late hand-over reply is undone by its token); if it too times out, the acquire
   * fails within its bound and every late reply is undone. Either way no hold is orphaned, and the
   * lock ends free for everyone.
   */
  @Test
  void aHandOverWhoseReplyIsLostOrphansNoHold() throws Exception {
    FreezableTcpProxy proxy = proxyToRedis();
    Latchkey client =
        connectThrough(
            proxy,
            options -> LostHandOverReply.waiterOptions(options.operationTimeout(SHORT_TIMEOUT)));
    LostHandOverReply.check(
        client,
        proxy,
        connect(UnaryOperator.identity()),
        uniqueName("hand-over"),
        BackendTimeoutException.class);
  }

  /**
   * Issue 7 / ADR 0007: a lease deadline that passes while a renewal is on its way suspends the
   * grant; when the renewal's answer then arrives confirming it (Redis applied it in time: only the
   * replies were held), the grant resumes, valid again, and no loss is ever reported.
   */
  @Test
  void aGrantSuspendedWhileItsRenewalIsOnItsWayResumesWhenTheRenewalIsConfirmed() throws Exception {
    Suspended suspended = suspendedBehindAFrozenProxy("resumed", FreezableTcpProxy::freezeReplies);
    Latchkey other = connect(UnaryOperator.identity());
    String name = suspended.name();
    Lease lease = suspended.lease();
    List<String> heard = suspended.heard();
    suspended.proxy().unfreeze();

    await().atMost(Duration.ofSeconds(3)).until(() -> heard.contains("resumed"));
    assertThat(heard).containsExactly("suspended", "resumed");
    assertThat(lease.isValid()).isTrue();
    assertThat(other.lock(name).tryLock()).as("the grant never lapsed on Redis").isFalse();
    lease.release();
    assertThat(heard).doesNotContain("lost");
    assertThat(other.lock(name).tryLock()).isTrue();
  }

  /**
   * Issue 7 / ADR 0007: a lease deadline that passes while a renewal is on its way suspends the
   * grant; when that renewal reaches Redis only after Redis let the grant go (and another client
   * took the lock), it finds it gone: the grant is lost, not resumed, and the late renewal neither
   * extends nor frees the other client's grant.
   */
  @Test
  void aGrantSuspendedWhileItsRenewalIsOnItsWayIsLostWhenTheRenewalArrivesTooLate()
      throws Exception {
    Suspended suspended = suspendedBehindAFrozenProxy("lost-late", FreezableTcpProxy::freeze);
    Latchkey other = connect(UnaryOperator.identity());
    String name = suspended.name();
    Lease lease = suspended.lease();
    List<String> heard = suspended.heard();
    Lease taken =
        await()
            .atMost(Duration.ofSeconds(3))
            .until(() -> other.lock(name).tryAcquire(), Optional::isPresent)
            .orElseThrow();
    suspended.proxy().unfreeze();

    await().atMost(Duration.ofSeconds(5)).until(() -> heard.contains("lost"));
    assertThat(heard).containsExactly("suspended", "lost");
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
    assertThat(inspect(other, name).orElseThrow().holders())
        .singleElement()
        .satisfies(holder -> assertThat(holder.fencingToken()).isEqualTo(taken.fencingToken()));
    taken.release();
  }
}
