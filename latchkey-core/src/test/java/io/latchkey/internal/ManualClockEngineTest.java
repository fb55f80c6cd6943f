package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.BackendTimeoutException;
import io.latchkey.BackendUnavailableException;
import io.latchkey.DistributedLock;
import io.latchkey.Feature;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseListener;
import io.latchkey.LeaseLostException;
import io.latchkey.LeasedSemaphore;
import io.latchkey.LockMode;
import io.latchkey.LockTimeoutException;
import io.latchkey.OwnerToken;
import io.latchkey.memory.ManualTicker;
import io.latchkey.memory.MemoryLockServer;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.GrantEvents;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.ResourceType;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The engine's timing on a manual clock: the memory server, the engine's ticker and its scheduler
 * share one {@link ManualTicker}, every timer runs on the test thread when the test moves the
 * clock, and lease-loss listeners run on the thread that reports the loss. The memory backend
 * answers synchronously, so nothing here waits for another thread: the tests state the exact moment
 * (to the nanosecond) at which something must, and must not yet, have happened; only the jittered
 * back-off is checked against its bounds.
 */
class ManualClockEngineTest {
  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration RENEW = Duration.ofSeconds(10);
  private static final Duration TIMEOUT = Duration.ofSeconds(5);
  private static final Duration RECHECK = Duration.ofSeconds(2);
  private static final Duration KEEP_ALIVE = Duration.ofSeconds(5);
  private static final Duration NANO = Duration.ofNanos(1);

  private final ManualTicker ticker = new ManualTicker();
  private final ManualScheduler scheduler = new ManualScheduler(ticker);
  private final MemoryLockServer server = new MemoryLockServer(ticker);
  private final LatchkeyBackend probe =
      server.backend().open(new BackendContext("probe", TIMEOUT, LEASE));
  private final List<LeaseLostException> heard = new CopyOnWriteArrayList<>();
  private @Nullable LatchkeyClient client;
  private @Nullable RecordingBackend backend;

  @AfterEach
  void close() {
    if (client != null) {
      client.close();
    }
    probe.close();
  }

  /** Opens the client under test on the manual clock, with these features hidden. */
  private LatchkeyClient open(Feature... hidden) {
    return open(LEASE, hidden);
  }

  /** Opens the client under test with another watchdog lease (renewed every {@link #RENEW}). */
  private LatchkeyClient open(Duration lease, Feature... hidden) {
    return open(lease, TIMEOUT, hidden);
  }

  /** Opens the client under test with another watchdog lease and operation timeout. */
  private LatchkeyClient open(Duration lease, Duration timeout, Feature... hidden) {
    LatchkeyOptions options =
        LatchkeyOptions.builder()
            .leaseTime(lease)
            .renewInterval(RENEW)
            .operationTimeout(timeout)
            .recheckInterval(RECHECK)
            .queueKeepAlive(KEEP_ALIVE)
            .ticker(ticker)
            .callbackExecutor(Runnable::run)
            .closeOnShutdown(false)
            .build();
    RecordingBackend recording = new RecordingBackend(server.backend(), ticker, Set.of(hidden));
    LatchkeyClient opened = LatchkeyClient.open(recording, options, scheduler);
    this.backend = recording;
    this.client = opened;
    return opened;
  }

  private RecordingBackend backend() {
    return Objects.requireNonNull(backend, "no client was opened");
  }

  /** The drift allowance the engine takes off a lease: 1 % plus 2 ms. */
  private static Duration trusted(Duration lease) {
    return lease.minus(lease.dividedBy(100)).minusMillis(2);
  }

  private static GrantRef grantOf(Lease lease) {
    return grantOf(ResourceType.LOCK, lease);
  }

  private static GrantRef grantOf(ResourceType type, Lease lease) {
    return new GrantRef(new HolderRef(type, lease.name(), lease.holderId()), lease.fencingToken());
  }

  /** Takes a lock (watchdog-renewed if {@code leaseTime} is null) and listens for its loss. */
  private Lease listenedTo(String name, @Nullable Duration leaseTime) throws InterruptedException {
    LatchkeyClient latchkey = Objects.requireNonNull(client, "no client was opened");
    Lease lease =
        leaseTime == null
            ? latchkey.lock(name).acquire(Duration.ZERO)
            : latchkey.lock(name).acquire(Duration.ZERO, leaseTime);
    lease.onLost(heard::add);
    return lease;
  }

  /** Valid, with no loss heard, until a nanosecond before {@code validFor}; lost, once, at it. */
  private void assertLostExactlyAfter(Lease lease, Duration validFor, String why) {
    scheduler.advance(validFor.minus(NANO));
    assertThat(heard).isEmpty();
    assertThat(lease.isValid()).isTrue();
    assertThat(lease.remaining()).isEqualTo(NANO);

    scheduler.advance(NANO);
    assertThat(heard).singleElement().satisfies(e -> assertThat(e).hasMessageContaining(why));
    assertThat(lease.isValid()).isFalse();
    assertThat(lease.remaining()).isZero();
  }

  /** Another process takes the lock for a while. */
  private AcquireResult probeAcquire(String name, Duration lease) {
    return probe
        .locks()
        .tryAcquire(new LockRequest(name, "probe", LockMode.EXCLUSIVE, lease.toMillis(), false, 0))
        .toCompletableFuture()
        .join();
  }

  /** Another process tries the lock as a waiter: queued if it is refused. */
  private AcquireResult probeWaits(String name) {
    return probe
        .locks()
        .tryAcquire(
            new LockRequest(name, "probe", LockMode.EXCLUSIVE, 1_000, false, KEEP_ALIVE.toMillis()))
        .toCompletableFuture()
        .join();
  }

  /** Another process tries the lock; if it gets it, it lets it go again at once. */
  private boolean othersCanTake(String name) {
    AcquireResult answer =
        probe
            .locks()
            .tryAcquire(new LockRequest(name, "probe", LockMode.EXCLUSIVE, 1_000, false, 0))
            .toCompletableFuture()
            .join();
    if (answer.isGranted()) {
      probe
          .locks()
          .release(
              new GrantRef(new HolderRef(ResourceType.LOCK, name, "probe"), answer.fencingToken()),
              LockMode.EXCLUSIVE)
          .toCompletableFuture()
          .join();
    }
    return answer.isGranted();
  }

  @Test
  void watchdogRenewsEveryHeldGrantInOneBatchPerPeriodAndKeepsItValid() throws Exception {
    LatchkeyClient latchkey = open();
    List<Lease> leases = new ArrayList<>();
    for (String name : List.of("w1", "w2", "w3")) {
      leases.add(latchkey.lock(name).acquire(Duration.ZERO));
    }
    Set<GrantRef> grants =
        leases.stream().map(ManualClockEngineTest::grantOf).collect(Collectors.toSet());

    scheduler.advance(RENEW.minus(NANO));
    assertThat(backend().renewals()).isEmpty();
    // Four leases' worth of periods: each renews all three grants in one call, on the dot.
    for (int period = 1; period <= 12; period++) {
      scheduler.advance(NANO);
      List<RecordingBackend.Renewal> renewals = backend().renewals();
      assertThat(renewals).hasSize(period);
      RecordingBackend.Renewal last = renewals.get(period - 1);
      assertThat(last.at()).isEqualTo(ticker.nanoTime());
      assertThat(new HashSet<>(last.grants())).isEqualTo(grants);
      assertThat(last.leaseMillis()).isEqualTo(LEASE.toMillis());

      scheduler.advance(RENEW.minus(NANO));
      assertThat(backend().renewals()).hasSize(period);
      for (Lease lease : leases) {
        assertThat(lease.isValid()).isTrue();
        // Counted from the last renewal's send, less the drift allowance.
        assertThat(lease.remaining()).isEqualTo(trusted(LEASE).minus(RENEW).plus(NANO));
        assertThat(othersCanTake(lease.name())).isFalse();
      }
    }

    for (Lease lease : leases) {
      lease.release();
    }
    scheduler.advance(RENEW.multipliedBy(3));
    assertThat(backend().renewals()).hasSize(12);
    assertThat(othersCanTake("w1")).isTrue();
  }

  @Test
  void leasedPermitsJoinTheLocksBatchAndAnExplicitPermitRunsOutByTheClock() throws Exception {
    LatchkeyClient latchkey = open();
    LeasedSemaphore pool = latchkey.leasedSemaphore("pool");
    assertThat(pool.trySetPermits(2)).isTrue();
    Lease permit = pool.acquire(Duration.ZERO);
    Lease lock = latchkey.lock("beside").acquire(Duration.ZERO);
    Duration leaseTime = Duration.ofSeconds(5);
    Lease explicit = pool.acquire(Duration.ZERO, leaseTime);
    explicit.onLost(heard::add);

    assertLostExactlyAfter(explicit, trusted(leaseTime), "lease time ran out");
    scheduler.advance(RENEW.minus(trusted(leaseTime)));

    assertThat(backend().renewals())
        .singleElement()
        .satisfies(
            renewal ->
                assertThat(renewal.grants())
                    .containsExactlyInAnyOrder(
                        grantOf(ResourceType.LEASED_SEMAPHORE, permit), grantOf(lock)));
    assertThat(permit.isValid()).isTrue();
    assertThat(pool.availablePermits()).isEqualTo(1); // the explicit permit ran out there too
    assertThatThrownBy(explicit::release).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void leaseIsLostExactlyWhenTheLastConfirmedRenewalRunsOutNotAtTheNextRenewal() throws Exception {
    open();
    Lease lease = listenedTo("lost", null);
    scheduler.advance(RENEW);
    assertThat(backend().renewals()).hasSize(1);

    // From now on renewals vanish: the one confirmed at RENEW is the last.
    backend().dropRenewals(true);
    assertLostExactlyAfter(lease, trusted(LEASE), "no renewal was confirmed");
    assertThat(backend().renewals()).hasSize(3); // at 20 s and 30 s, each timed out

    // The next renewal would have been due 302 ms later: a lost grant is not renewed any more.
    scheduler.advance(LEASE);
    assertThat(heard).hasSize(1);
    assertThat(backend().renewals()).hasSize(3);
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void explicitLeaseRunsOutByTheClockWithOneLossReport() throws Exception {
    open();
    Duration leaseTime = Duration.ofSeconds(10);
    Lease lease = listenedTo("explicit", leaseTime);

    assertLostExactlyAfter(lease, trusted(leaseTime), "lease time ran out");

    scheduler.advance(LEASE.multipliedBy(2));
    assertThat(heard).hasSize(1);
    assertThat(backend().renewals()).isEmpty();
    // A listener added after the loss hears of it at once.
    List<LeaseLostException> late = new ArrayList<>();
    lease.onLost(late::add);
    assertThat(late).containsExactlyElementsOf(heard);
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void aLeaseIsInvalidOnceItsTimeHasPassedEvenIfItsTimerRunsLate() throws Exception {
    open();
    Duration leaseTime = Duration.ofSeconds(10);
    Lease lease = listenedTo("late-timer", leaseTime);

    // The clock moves but the scheduler's thread is busy: no timer has run yet.
    ticker.advance(trusted(leaseTime));
    assertThat(lease.isValid()).isFalse();
    assertThat(lease.remaining()).isZero();
    assertThat(heard).isEmpty();

    scheduler.runDue();
    assertThat(heard).hasSize(1);
  }

  @Test
  void aWaiterLooksAgainAtTheRecheckBoundAndWhenTheHoldersLeaseEnds() {
    LatchkeyClient latchkey = open();
    Duration holderLease = Duration.ofSeconds(3);
    long start = ticker.nanoTime();
    AcquireResult held = probeAcquire("expiring", holderLease);
    assertThat(held.isGranted()).isTrue();

    CompletableFuture<Lease> waiting =
        latchkey.lock("expiring").acquireAsync(Duration.ofMinutes(1)).toCompletableFuture();
    long recheck = Math.min(RECHECK.toNanos(), KEEP_ALIVE.toNanos() / 3);
    scheduler.advance(Duration.ofNanos(recheck - 1));
    assertThat(backend().acquireTimes()).hasSize(2);
    scheduler.advance(NANO);
    assertThat(backend().acquireTimes()).hasSize(3);

    // Nobody publishes an expiry: the waiter looks again when the holder's lease ends.
    scheduler.advance(holderLease);
    assertThat(waiting).isCompleted();
    List<Long> times = backend().acquireTimes();
    assertThat(times).hasSize(4);
    assertThat(times.get(3) - start)
        .isBetween(holderLease.toNanos(), holderLease.plusMillis(2).toNanos());
  }

  @Test
  void aWaiterGivesUpExactlyAtItsWaitBound() {
    LatchkeyClient latchkey = open();
    assertThat(probeAcquire("busy", Duration.ofMinutes(10)).isGranted()).isTrue();
    Duration wait = Duration.ofSeconds(3);

    CompletableFuture<Lease> waiting =
        latchkey.lock("busy").acquireAsync(wait).toCompletableFuture();
    scheduler.advance(wait.minus(NANO));
    assertThat(waiting).isNotDone();
    scheduler.advance(NANO);

    assertThat(waiting)
        .failsWithin(Duration.ZERO)
        .withThrowableOfType(ExecutionException.class)
        .withCauseInstanceOf(LockTimeoutException.class);
    assertThat(backend().acquireTimes()).last().isEqualTo(ticker.nanoTime());
  }

  @Test
  void suspendedGrantsAreNotValidUntilARenewalConfirmsThemOnResumption() throws Exception {
    open();
    Lease lease = listenedTo("suspended", null);
    GrantEvents events = backend().events();

    events.allSuspended("connection dropped");
    assertThat(lease.isValid()).isFalse();
    assertThat(backend().renewals()).isEmpty();

    events.allResumed();
    assertThat(backend().renewals())
        .singleElement()
        .satisfies(
            confirmation -> {
              assertThat(confirmation.grants()).containsExactly(grantOf(lease));
              assertThat(confirmation.leaseMillis()).isEqualTo(1); // never shortens the lease
            });
    assertThat(lease.isValid()).isTrue();
    assertThat(heard).isEmpty();
    lease.release();
  }

  @Test
  void aGrantReportedLostFiresListenersAndFailsItsRelease() throws Exception {
    open();
    Lease lease = listenedTo("reported", null);
    GrantEvents events = backend().events();

    // A report about another grant of the same holder (another token) is not about this one.
    events.lost(
        new GrantRef(grantOf(lease).holder(), lease.fencingToken() + 1), "a stale node vanished");
    assertThat(heard).isEmpty();
    assertThat(lease.isValid()).isTrue();

    events.lost(grantOf(lease), "its node was deleted");
    assertThat(heard)
        .singleElement()
        .satisfies(e -> assertThat(e).hasMessageContaining("its node was deleted"));
    assertThat(lease.isValid()).isFalse();
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void aResumedGrantThatTheServerNoLongerHasIsLost() throws Exception {
    open();
    Lease lease = listenedTo("gone", null);
    GrantEvents events = backend().events();

    events.suspended(grantOf(lease), "session in doubt");
    assertThat(lease.isValid()).isFalse();
    assertThat(probe.admin().forceRelease("gone").toCompletableFuture().join()).isTrue();
    events.resumed(grantOf(lease));

    assertThat(backend().renewals()).hasSize(1);
    assertThat(heard).hasSize(1);
    assertThat(lease.isValid()).isFalse();
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void aHangingAcquireTimesOutAtTheBoundAndItsLateGrantIsUndoneOnce() {
    LatchkeyClient latchkey = open();
    backend().holdAcquireAnswers(true);
    CompletableFuture<Lease> acquiring =
        latchkey.lock("late").acquireAsync(Duration.ofMinutes(1)).toCompletableFuture();

    scheduler.advance(TIMEOUT.minus(NANO));
    assertThat(acquiring).isNotDone();
    scheduler.advance(NANO);
    assertThat(acquiring)
        .failsWithin(Duration.ZERO)
        .withThrowableOfType(ExecutionException.class)
        .withCauseInstanceOf(BackendTimeoutException.class);
    // The server did grant it; the answer was only lost on the way.
    assertThat(othersCanTake("late")).isFalse();
    assertThat(backend().releases()).isEmpty();

    backend().deliverAcquireAnswers();

    assertThat(backend().releases())
        .singleElement()
        .satisfies(
            undone -> {
              assertThat(undone.name()).isEqualTo("late");
              assertThat(undone.holderId()).startsWith(latchkey.clientId());
              assertThat(undone.fencingToken()).isEqualTo(1);
            });
    assertThat(othersCanTake("late")).isTrue();
    assertThat(latchkey.ledger().all()).isEmpty();
    scheduler.advance(LEASE);
    assertThat(backend().releases()).hasSize(1);
  }

  @Test
  void aLateReentrantGrantIsUndoneByOneHoldAndTheEarlierHoldStays() throws Exception {
    LatchkeyClient latchkey = open();
    Lease first = latchkey.lock("reentered").acquire(Duration.ZERO);
    backend().holdAcquireAnswers(true);
    CompletableFuture<Lease> again =
        latchkey.lock("reentered").acquireAsync(Duration.ofMinutes(1)).toCompletableFuture();
    scheduler.advance(TIMEOUT);
    assertThat(again).isCompletedExceptionally();

    backend().deliverAcquireAnswers();

    assertThat(backend().releases()).containsExactly(grantOf(first));
    assertThat(first.isValid()).isTrue();
    assertThat(othersCanTake("reentered")).isFalse();
    first.release();
    assertThat(othersCanTake("reentered")).isTrue();
  }

  /** A waiter of another owner of the same client, queued behind the holder and asleep. */
  private CompletableFuture<Lease> sleepingWaiter(LatchkeyClient latchkey, String name) {
    CompletableFuture<Lease> waiting =
        latchkey
            .lock(name)
            .withOwner(OwnerToken.random())
            .acquireAsync(Duration.ofMinutes(1))
            .toCompletableFuture();
    assertThat(waiting).isNotDone();
    return waiting;
  }

  /**
   * A holder, a sleeping waiter of another owner of the same client, and the holder's release on
   * its way, carrying the waiter's attempt, held back until the test delivers it.
   */
  private record HandOverOnItsWay(
      Lease holder, CompletableFuture<Lease> waiting, CompletableFuture<Void> releasing) {}

  private HandOverOnItsWay handOverOnItsWay(LatchkeyClient latchkey, String name)
      throws InterruptedException {
    Lease holder = latchkey.lock(name).acquire(Duration.ZERO);
    CompletableFuture<Lease> waiting = sleepingWaiter(latchkey, name);
    backend().holdHandOvers(true);
    return new HandOverOnItsWay(holder, waiting, holder.releaseAsync().toCompletableFuture());
  }

  @Test
  void aReleaseHandsTheLockToTheClientsSleepingWaiterWithoutAnotherAttempt() throws Exception {
    LatchkeyClient latchkey = open();
    Lease holder = latchkey.lock("handed").acquire(Duration.ZERO);
    CompletableFuture<Lease> waiting = sleepingWaiter(latchkey, "handed");
    int attempts = backend().acquireTimes().size();

    holder.release();

    assertThat(backend().handOvers())
        .singleElement()
        .satisfies(
            next -> {
              assertThat(next.name()).isEqualTo("handed");
              assertThat(next.owner()).isNotEqualTo(holder.holderId());
            });
    assertThat(waiting).isCompleted();
    Lease next = waiting.get();
    assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
    assertThat(next.isValid()).isTrue();
    assertThat(backend().acquireTimes()).hasSize(attempts);
    assertThat(othersCanTake("handed")).isFalse();
    next.release();
    assertThat(othersCanTake("handed")).isTrue();
  }

  @Test
  void aWaiterWokenWhileAReleaseCarriesItsAttemptWaitsForThatAnswer() throws Exception {
    HandOverOnItsWay handOver = handOverOnItsWay(open(), "claimed");
    int attempts = backend().acquireTimes().size();

    scheduler.advance(RECHECK); // the waiter's re-check comes while the release is on its way

    assertThat(backend().acquireTimes()).hasSize(attempts);
    assertThat(handOver.waiting()).isNotDone();
    backend().deliverHandOvers();
    assertThat(handOver.releasing()).isCompleted();
    assertThat(handOver.waiting().get().isValid()).isTrue();
    assertThat(backend().acquireTimes()).hasSize(attempts);
  }

  @Test
  void aWaiterWokenWhileAReleaseCarriedNoGrantForItTriesOnceThatIsAnswered() throws Exception {
    LatchkeyClient latchkey = open();
    Lease holder = latchkey.lock("queued").acquire(Duration.ZERO);
    // Another client's waiter heads the queue: the release wakes it, and grants ours nothing.
    assertThat(probeWaits("queued").isGranted()).isFalse();
    CompletableFuture<Lease> waiting = sleepingWaiter(latchkey, "queued");
    int attempts = backend().acquireTimes().size();
    backend().holdHandOvers(true);

    CompletableFuture<Void> releasing = holder.releaseAsync().toCompletableFuture();
    assertThat(backend().handOvers()).hasSize(1);
    scheduler.advance(RECHECK); // the waiter's re-check comes while the release is on its way
    assertThat(backend().acquireTimes()).hasSize(attempts);

    backend().deliverHandOvers();

    assertThat(releasing).isCompleted();
    assertThat(backend().acquireTimes()).hasSize(attempts + 1);
    assertThat(waiting).isNotDone(); // the lock is kept for the woken head of the queue
  }

  @Test
  void aWaiterThatGivesUpWhileAReleaseCarriesItsAttemptIsNotGranted() throws Exception {
    LatchkeyClient latchkey = open();
    HandOverOnItsWay handOver = handOverOnItsWay(latchkey, "unwanted");
    assertThat(handOver.waiting().cancel(false)).isTrue();

    backend().deliverHandOvers();

    assertThat(handOver.releasing()).isCompleted();
    assertThat(latchkey.ledger().all()).isEmpty();
    assertThat(othersCanTake("unwanted")).isTrue();
  }

  @Test
  void aHandOverWhoseAnswerIsLostIsUndoneAndTheWaiterGetsTheLockByItself() throws Exception {
    LatchkeyClient latchkey = open();
    HandOverOnItsWay handOver = handOverOnItsWay(latchkey, "lost-answer");
    scheduler.advance(TIMEOUT);
    assertThat(handOver.releasing()).isCompletedExceptionally();
    CompletableFuture<Lease> waiting = handOver.waiting();
    assertThat(waiting).isNotDone();

    backend().deliverHandOvers(); // applied on the server now; its answer comes too late

    scheduler.advance(RECHECK);
    Lease next = waiting.get();
    assertThat(next.isValid()).isTrue();
    assertThat(latchkey.ledger().all()).hasSize(1);
    next.release();
    assertThat(othersCanTake("lost-answer")).isTrue();
  }

  /**
   * A holder handed the lock by the release of another owner of this client, while a waiter of this
   * client waits: from then on, the client's channel knows which of its grants holds the lock.
   */
  private Lease handedOverHolder(LatchkeyClient latchkey, String name) throws Exception {
    Lease first = latchkey.lock(name).acquire(Duration.ZERO);
    CompletableFuture<Lease> second = sleepingWaiter(latchkey, name);
    first.release();
    assertThat(second).isCompleted();
    return second.get();
  }

  @Test
  void aWaiterBehindAHolderOfItsOwnClientAsksTheBackendNothingAndIsHandedTheLock()
      throws Exception {
    LatchkeyClient latchkey = open();
    Lease holder = handedOverHolder(latchkey, "local");
    int attempts = backend().acquireTimes().size();
    int handOvers = backend().handOvers().size();

    CompletableFuture<Lease> waiting = sleepingWaiter(latchkey, "local");
    CompletableFuture<Lease> behind = sleepingWaiter(latchkey, "local");
    scheduler.advance(KEEP_ALIVE.dividedBy(3).minus(NANO)); // just short of its re-check

    assertThat(backend().acquireTimes()).hasSize(attempts);
    holder.release();
    assertThat(waiting).isCompleted();
    assertThat(behind).isNotDone();
    Lease next = waiting.get();
    assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
    assertThat(next.isValid()).isTrue();
    assertThat(othersCanTake("local")).isFalse();
    next.release();
    assertThat(behind).isCompleted();
    assertThat(backend().acquireTimes()).hasSize(attempts);
    assertThat(backend().handOvers()).hasSize(handOvers + 2);
    behind.get().release();
    assertThat(othersCanTake("local")).isTrue();
  }

  @Test
  void aWaiterBehindALocalHolderGoesBehindAnotherClientsWaiterThatQueuedMeanwhile()
      throws Exception {
    LatchkeyClient latchkey = open();
    Lease holder = handedOverHolder(latchkey, "mixed");
    CompletableFuture<Lease> waiting = sleepingWaiter(latchkey, "mixed");
    int attempts = backend().acquireTimes().size();
    assertThat(probeWaits("mixed").isGranted()).isFalse();

    holder.release();

    // The release woke the other client's waiter; ours tried by itself and queued behind it.
    assertThat(backend().acquireTimes()).hasSize(attempts + 1);
    assertThat(waiting).isNotDone();
    AcquireResult probeGranted = probeWaits("mixed");
    assertThat(probeGranted.isGranted()).isTrue();
    probe
        .locks()
        .release(
            new GrantRef(
                new HolderRef(ResourceType.LOCK, "mixed", "probe"), probeGranted.fencingToken()),
            LockMode.EXCLUSIVE)
        .toCompletableFuture()
        .join();
    // The probe's release also publishes a wake-up, which the in-memory server delivers on a
    // thread of its own: the waiter tries at its re-check or at that wake-up, whichever comes
    // first.
    scheduler.advance(RECHECK);
    await().atMost(Duration.ofSeconds(10)).until(waiting::isDone);
    waiting.get().release();
  }

  @Test
  void aWaiterBehindALocalHolderTriesByItselfWhenThatHoldIsLostOrAtItsRecheck() throws Exception {
    LatchkeyClient latchkey = open();
    Lease holder = handedOverHolder(latchkey, "lost-local");
    CompletableFuture<Lease> waiting = sleepingWaiter(latchkey, "lost-local");
    int attempts = backend().acquireTimes().size();

    scheduler.advance(RECHECK);
    // No release came within the re-check bound: it asked the backend, and waits as any other.
    assertThat(backend().acquireTimes()).hasSize(attempts + 1);
    assertThat(waiting).isNotDone();

    CompletableFuture<Lease> behind = sleepingWaiter(latchkey, "lost-local");
    int before = backend().acquireTimes().size();
    backend().events().lost(grantOf(holder), "its record was deleted");
    probe.locks().release(grantOf(holder), LockMode.EXCLUSIVE).toCompletableFuture().join();

    // The newer waiter, which waited locally behind the lost hold, tries at once.
    assertThat(backend().acquireTimes().size()).isGreaterThan(before);
    scheduler.advance(RECHECK);
    assertThat(waiting).isCompleted();
    waiting.get().release();
    assertThat(behind).isCompleted();
    behind.get().release();
  }

  @Test
  void aGrantThatArrivesAfterTheCallerCancelledIsReleased() {
    LatchkeyClient latchkey = open();
    backend().holdAcquireAnswers(true);
    CompletableFuture<Lease> acquiring =
        latchkey.lock("cancelled").acquireAsync(Duration.ofMinutes(1)).toCompletableFuture();
    assertThat(acquiring.cancel(false)).isTrue();
    assertThat(othersCanTake("cancelled")).isFalse();

    backend().deliverAcquireAnswers();

    assertThat(backend().releases())
        .singleElement()
        .satisfies(undone -> assertThat(undone.fencingToken()).isEqualTo(1));
    assertThat(latchkey.ledger().all()).isEmpty();
    assertThat(othersCanTake("cancelled")).isTrue();
  }

  @Test
  void aGrantAnsweredAfterItsLeaseIsUndoneAndNotHandedOut() {
    LatchkeyClient latchkey = open();
    Duration leaseTime = Duration.ofSeconds(1);
    backend().holdAcquireAnswers(true);
    CompletableFuture<Lease> acquiring =
        latchkey.lock("stale").acquireAsync(Duration.ZERO, leaseTime).toCompletableFuture();

    // Past what the client may trust (988 ms), before the server's own expiry (1 s): the answer,
    // still within the operation timeout, is a grant that the server holds but nobody may use.
    scheduler.advance(Duration.ofMillis(995));
    assertThat(othersCanTake("stale")).isFalse();
    backend().holdAcquireAnswers(false);
    backend().deliverAcquireAnswers();

    // The stale grant is given back and never handed out; the engine tries once more at once
    // (even for a try that does not wait) and hands out that fresh grant.
    assertThat(backend().releases())
        .singleElement()
        .satisfies(undone -> assertThat(undone.fencingToken()).isEqualTo(1));
    assertThat(acquiring)
        .succeedsWithin(Duration.ZERO)
        .satisfies(
            lease -> {
              assertThat(lease.fencingToken()).isGreaterThan(1);
              assertThat(lease.isValid()).isTrue();
              assertThat(lease.remaining()).isEqualTo(trusted(leaseTime));
              lease.release();
            });
    assertThat(latchkey.ledger().all()).isEmpty();
    assertThat(othersCanTake("stale")).isTrue();
  }

  @Test
  void withoutPushWakeupsRetriesBackOffWithJitterFromFiveMillisecondsUpToTheRecheckBound() {
    LatchkeyClient latchkey = open(Feature.WAKEUP_PUSH);
    assertThat(latchkey.hasPushWakeups()).isFalse();
    AcquireResult held = probeAcquire("polled", Duration.ofMinutes(10));
    assertThat(held.isGranted()).isTrue();

    CompletableFuture<Lease> waiting =
        latchkey.lock("polled").acquireAsync(Duration.ofMinutes(1)).toCompletableFuture();
    // The first try, and one more once the (silent) wake-up channel is ready, both at once.
    assertThat(backend().acquireTimes()).hasSize(2);
    int rounds = 14;
    while (backend().acquireTimes().size() < rounds + 2) {
      scheduler.advance(scheduler.nextDelay().orElseThrow());
    }

    List<Long> times = backend().acquireTimes();
    assertThat(times.get(1)).isEqualTo(times.get(0));
    long minimum = Duration.ofMillis(5).toNanos();
    long maxSleep = Math.min(RECHECK.toNanos(), KEEP_ALIVE.toNanos() / 3);
    List<Long> gaps = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      long gap = times.get(round + 2) - times.get(round + 1);
      long cap = Math.min(minimum << round, maxSleep);
      assertThat(gap).as("sleep of round %d", round).isBetween(minimum / 2, minimum / 2 + cap);
      gaps.add(gap);
    }
    // It grows: a fixed 5 ms poll would never sleep longer than 7.5 ms.
    assertThat(gaps.subList(5, rounds).stream().mapToLong(Long::longValue).max().orElseThrow())
        .isGreaterThan(minimum + minimum / 2);
    // It is jittered: once capped, the sleeps still differ.
    assertThat(Set.copyOf(gaps.subList(9, rounds))).hasSizeGreaterThan(1);
    assertThat(waiting).isNotDone();

    probe
        .locks()
        .release(
            new GrantRef(new HolderRef(ResourceType.LOCK, "polled", "probe"), held.fencingToken()),
            LockMode.EXCLUSIVE)
        .toCompletableFuture()
        .join();
    int attempts = backend().acquireTimes().size();
    while (backend().acquireTimes().size() == attempts) {
      scheduler.advance(scheduler.nextDelay().orElseThrow());
    }
    assertThat(waiting).isCompleted();
    assertThat(waiting.join().isValid()).isTrue();
  }

  /**
   * The engine trusts the earlier of its lease and the validity the backend guarantees (a session
   * timeout): a grant guaranteed for 3 s of a 30 s lease is valid for 3 s less the drift, each
   * confirmed renewal moves that on by 3 s from when it was sent, and without one it is lost then.
   */
  @Test
  void theBackendsValidityCapsTheLease() throws Exception {
    open();
    Duration cap = Duration.ofSeconds(3);
    backend().capValidity(cap.toMillis());
    Lease lease = listenedTo("capped", null);
    assertThat(lease.remaining()).isEqualTo(trusted(cap));

    // The watchdog renews every 10 s, later than the cap: nothing extends the grant in time.
    assertLostExactlyAfter(lease, trusted(cap), "no renewal was confirmed");
    assertThat(backend().renewals()).isEmpty();
  }

  /**
   * A backend whose own bound ran out a moment before the engine's (a socket read timeout set to
   * the time left) is reported as the same timeout, with the backend's failure attached.
   */
  @Test
  void aBackendsOwnTimeoutIsReportedAsATimeout() throws Exception {
    LatchkeyClient latchkey = open();
    Lease lease = latchkey.lock("own-bound").acquire(Duration.ZERO, Duration.ofSeconds(20));
    SocketTimeoutException readTimedOut = new SocketTimeoutException("Read timed out");
    backend()
        .failReleasesWith(
            new java.io.UncheckedIOException(new java.io.IOException("I/O error", readTimedOut)));

    assertThatThrownBy(lease::release)
        .isInstanceOf(BackendTimeoutException.class)
        .hasMessageContaining("did not answer")
        .hasMessageContaining("I/O error")
        .satisfies(e -> assertThat(e.getSuppressed()).hasSize(1));
    backend().failReleasesWith(null);
  }

  /**
   * A release that never reached the backend leaves its hold there; the same thread's next acquire
   * must not re-enter it (the fault suite saw one token handed out 2,918 times): the engine gives
   * every hold of that grant back and takes a fresh one, with a new fencing token.
   */
  @Test
  void aReleaseThatNeverArrivedIsNotInheritedByTheNextAcquire() throws Exception {
    LatchkeyClient latchkey = open();
    DistributedLock lock = latchkey.lock("left-over");
    Lease first = lock.acquire(Duration.ZERO, Duration.ofSeconds(20));
    backend().failReleases(true);
    assertThatThrownBy(first::release).isInstanceOf(BackendUnavailableException.class);
    backend().failReleases(false);

    Lease second = lock.acquire(Duration.ZERO, Duration.ofSeconds(20));

    assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
    assertThat(lock.holdCount()).isEqualTo(1);
    assertThat(probe.admin().inspect("left-over").toCompletableFuture().join())
        .hasValueSatisfying(
            info ->
                assertThat(info.holders())
                    .singleElement()
                    .satisfies(holder -> assertThat(holder.holds()).isEqualTo(1)));
    second.release();
    assertThat(probeAcquire("left-over", Duration.ofSeconds(1)).isGranted()).isTrue();
  }

  // ---- a lease deadline that passes while a renewal is on its way ----

  /**
   * A watchdog lease of 12 s renewed every 10 s, with a 5 s call bound: the renewal sent at 10 s is
   * still on its way when the lease runs out at 11.878 s (12 s less the drift allowance).
   */
  private static final Duration SHORT_LEASE = Duration.ofSeconds(12);

  /** Adds to {@code transitions} each suspension, resumption and loss, with the clock's reading. */
  private void recordTransitions(Lease lease, List<String> transitions) {
    lease.addListener(
        new LeaseListener() {
          @Override
          public void suspended(String reason) {
            transitions.add("suspended at " + ticker.nanoTime());
          }

          @Override
          public void resumed() {
            transitions.add("resumed at " + ticker.nanoTime());
          }

          @Override
          public void lost(LeaseLostException reason) {
            transitions.add("lost at " + ticker.nanoTime());
          }
        });
  }

  /**
   * A watchdog grant gets no lease timer until the watchdog's first pass (most grants are released
   * before it); that pass arms it. So a first renewal that hangs past the grant's validity (here
   * the operation timeout is 25 s) still finds the grant suspended exactly at its deadline, and
   * lost when the renewal times out.
   */
  @Test
  void aWatchdogGrantIsSuspendedAtItsDeadlineEvenWhenItsFirstRenewalHangsPastIt() throws Exception {
    open(LEASE, Duration.ofSeconds(25));
    Lease lease = listenedTo("first-renewal-hangs", null);
    List<String> transitions = new CopyOnWriteArrayList<>();
    recordTransitions(lease, transitions);
    backend().holdRenewals(true);

    scheduler.advance(trusted(LEASE).minus(NANO));
    assertThat(backend().renewals()).hasSize(1);
    assertThat(lease.isValid()).isTrue();
    assertThat(transitions).isEmpty();

    scheduler.advance(NANO);
    assertThat(transitions).containsExactly("suspended at " + ticker.nanoTime());
    assertThat(lease.isValid()).isFalse();

    // The renewal sent at 10 s times out at 35 s.
    scheduler.advance(RENEW.plusSeconds(25).minus(trusted(LEASE)));
    assertThat(transitions).hasSize(2).last().isEqualTo("lost at " + ticker.nanoTime());
    assertThat(heard).hasSize(1);
  }

  /**
   * Opens a client with {@link #SHORT_LEASE}, takes a lock, holds back the renewal sent at 10 s and
   * moves the clock to the lease's end: the grant is suspended there, exactly, and not lost.
   */
  private Lease suspendedWhileItsRenewalIsOnItsWay(String name, List<String> transitions)
      throws InterruptedException {
    open(SHORT_LEASE);
    Lease lease = listenedTo(name, null);
    recordTransitions(lease, transitions);
    backend().holdRenewals(true);
    scheduler.advance(RENEW);
    assertThat(backend().renewals()).hasSize(1);

    scheduler.advance(trusted(SHORT_LEASE).minus(RENEW).minus(NANO));
    assertThat(lease.isValid()).isTrue();
    assertThat(transitions).isEmpty();

    scheduler.advance(NANO);
    assertThat(transitions).containsExactly("suspended at " + ticker.nanoTime());
    assertThat(lease.isValid()).isFalse();
    assertThat(heard).isEmpty();
    return lease;
  }

  /**
   * The renewal that was on its way at the deadline reaches the backend before the backend's own
   * lease ran out (12 s) and is confirmed: the grant never lapsed there, so it resumes, valid until
   * that renewal's send + the lease, and no loss is ever reported.
   */
  @Test
  void aGrantSuspendedAtItsDeadlineResumesWhenTheRenewalOnItsWayIsConfirmed() throws Exception {
    List<String> transitions = new CopyOnWriteArrayList<>();
    Lease lease = suspendedWhileItsRenewalIsOnItsWay("resumed-late", transitions);

    scheduler.advance(Duration.ofMillis(100)); // 11.978 s: the backend still has the grant
    assertThat(lease.isValid()).isFalse();
    backend().holdRenewals(false);
    backend().deliverRenewals();

    assertThat(transitions).hasSize(2).last().isEqualTo("resumed at " + ticker.nanoTime());
    assertThat(lease.isValid()).isTrue();
    // Counted from the renewal's send at 10 s.
    Duration sinceAcquired = trusted(SHORT_LEASE).plusMillis(100);
    assertThat(lease.remaining()).isEqualTo(RENEW.plus(trusted(SHORT_LEASE)).minus(sinceAcquired));
    assertThat(othersCanTake("resumed-late")).isFalse();

    // The watchdog goes on as usual: renewed at 20 s, valid past the old deadline, never lost.
    scheduler.advance(SHORT_LEASE.multipliedBy(3));
    assertThat(lease.isValid()).isTrue();
    assertThat(heard).isEmpty();
    assertThat(transitions).hasSize(2);
    lease.release();
    assertThat(othersCanTake("resumed-late")).isTrue();
  }

  /**
   * The renewal that was on its way at the deadline reaches the backend after the backend's lease
   * ran out: it finds the grant gone, and the suspended grant is lost at that answer, once.
   */
  @Test
  void aGrantSuspendedAtItsDeadlineIsLostWhenTheRenewalOnItsWayFindsItGone() throws Exception {
    List<String> transitions = new CopyOnWriteArrayList<>();
    Lease lease = suspendedWhileItsRenewalIsOnItsWay("gone-late", transitions);

    scheduler.advance(Duration.ofMillis(200)); // 12.078 s: the backend's lease ran out at 12 s
    assertThat(heard).isEmpty();
    backend().holdRenewals(false);
    backend().deliverRenewals();

    assertThat(transitions).hasSize(2).last().isEqualTo("lost at " + ticker.nanoTime());
    assertThat(heard)
        .singleElement()
        .satisfies(e -> assertThat(e).hasMessageContaining("no longer knows"));
    assertThat(lease.isValid()).isFalse();
    scheduler.advance(SHORT_LEASE);
    assertThat(transitions).hasSize(2);
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
    assertThat(othersCanTake("gone-late")).isTrue();
  }

  /**
   * The renewal that was on its way at the deadline never answers: the grant stays suspended until
   * the call's bound (sent at 10 s + 5 s) and is lost exactly then; an answer that comes after that
   * does not bring it back.
   */
  @Test
  void aGrantSuspendedAtItsDeadlineIsLostWhenTheRenewalOnItsWayTimesOut() throws Exception {
    List<String> transitions = new CopyOnWriteArrayList<>();
    Lease lease = suspendedWhileItsRenewalIsOnItsWay("unanswered", transitions);
    // Suspended at trusted(SHORT_LEASE) after the acquire; the renewal was sent at RENEW.
    scheduler.advance(RENEW.plus(TIMEOUT).minus(trusted(SHORT_LEASE)).minus(NANO));
    assertThat(transitions).hasSize(1);
    assertThat(heard).isEmpty();

    scheduler.advance(NANO);
    assertThat(transitions).hasSize(2).last().isEqualTo("lost at " + ticker.nanoTime());
    assertThat(heard)
        .singleElement()
        .satisfies(e -> assertThat(e).hasMessageContaining("no renewal was confirmed"));

    backend().holdRenewals(false);
    backend().deliverRenewals(); // the late answer changes nothing
    scheduler.advance(SHORT_LEASE);
    assertThat(transitions).hasSize(2);
    assertThat(lease.isValid()).isFalse();
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
  }

  /**
   * A renewal applied on the backend whose answer never comes: the engine reports the grant lost
   * (at the renewal's bound, since it was in doubt from its deadline), and the backend would keep
   * the record another lease (until 22 s) for nobody. The engine releases it by its token at the
   * loss, so others can take the lock at once.
   */
  @Test
  void aGrantLostWhileARenewalOfItMayHaveBeenAppliedIsReleasedOnTheBackend() throws Exception {
    open(SHORT_LEASE);
    Lease lease = listenedTo("unanswered-renewal", null);
    backend().loseRenewalAnswers(true);
    scheduler.advance(RENEW); // applied: the backend keeps the grant until 22 s
    assertThat(lease.isValid()).isTrue();

    scheduler.advance(TIMEOUT.minus(NANO));
    assertThat(heard).isEmpty();
    assertThat(backend().releases()).isEmpty();
    assertThat(othersCanTake("unanswered-renewal")).isFalse();

    scheduler.advance(NANO); // 15 s: the renewal's bound
    assertThat(heard)
        .singleElement()
        .satisfies(e -> assertThat(e).hasMessageContaining("no renewal was confirmed"));
    assertThat(backend().releases()).containsExactly(grantOf(lease));
    assertThat(othersCanTake("unanswered-renewal")).isTrue();
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
  }
}
