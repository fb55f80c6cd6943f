package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Contention.assertStillWaiting;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LeasedSemaphore;
import io.latchkey.LockTimeoutException;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import io.latchkey.testkit.RequiresMissingFeature;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Conformance: leased semaphore accounting and permit expiry.
 *
 * <ul>
 *   <li>{@link #trySetPermitsOnlyOnceAndAddPermitsChangesTheTotal}: the first {@code trySetPermits}
 *       wins; {@code addPermits} raises and lowers the total.
 *   <li>{@link #addPermitsRefusesATotalOutOfTheRangeOfAnInt}: {@code addPermits} that would take
 *       the total past {@link Integer#MAX_VALUE} or below {@link Integer#MIN_VALUE} throws {@link
 *       IllegalArgumentException} and changes nothing.
 *   <li>{@link #permitsHaveDistinctIds}: each granted permit is a lease of the semaphore's name
 *       with its own id.
 *   <li>{@link #atMostTheSetNumberOfPermitsIsGranted}: with N permits out, {@code tryAcquire} is
 *       empty and {@code acquire} times out, whichever client asks.
 *   <li>{@link #neverMorePermitsHeldThanSetUnderContention}: threads of three clients never hold
 *       more than N permits at once.
 *   <li>{@link #expiredPermitReturnsToThePool}: a permit whose explicit lease ran out is granted to
 *       a waiting client; its holder is told (listener) and its release throws {@link
 *       LeaseLostException}.
 *   <li>{@link #anotherClientReleasesByPermitId}: {@code release(permitId)} from another client
 *       frees the permit once; the original lease then reports the loss on release.
 *   <li>{@link #permitReleasedElsewhereIsReportedLostByTheWatchdog}: when another client releases a
 *       watchdog-renewed permit by id, the holder's next renewal turns its lease invalid and fires
 *       its loss listener.
 *   <li>{@link #watchdogKeepsAPermitWithoutExplicitLease}: a permit taken without a lease time
 *       outlives many watchdog leases and is released cleanly.
 *   <li>{@link #availablePermitsCountsExpiredPermitsAsFree}: a permit whose lease ran out counts as
 *       free without anyone releasing it.
 *   <li>{@link #acquireAsyncGetsAPermitWhenOneIsReleased}: the async form waits, completes on
 *       release, and fails with {@link LockTimeoutException} when its wait runs out.
 *   <li>{@link #cancelledAcquireAsyncTakesNothing}: cancelling the stage of {@code acquireAsync}
 *       abandons the wait; a permit freed afterwards stays free.
 *   <li>{@link #leasedSemaphoreIsRefusedWithoutTheFeature}: a backend without {@link
 *       Feature#LEASED_SEMAPHORE} refuses {@code leasedSemaphore(...)}.
 * </ul>
 */
public abstract class LeasedSemaphoreContract extends ContractSupport {
  private static final Duration LONG_WAIT = Duration.ofSeconds(10);
  private static final Duration SHORT_WAIT = Duration.ofMillis(200);
  private static final Duration LONG_LEASE = Duration.ofSeconds(30);
  private static final Duration SHORT_LEASE = Duration.ofMillis(300);

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.PERMIT_LEASE_TIME})
  public void trySetPermitsOnlyOnceAndAddPermitsChangesTheTotal() {
    String name = uniqueName("leased-set");
    LeasedSemaphore mine = client().leasedSemaphore(name);
    LeasedSemaphore theirs = newClient().leasedSemaphore(name);

    assertThat(mine.availablePermits()).as("a semaphore never set has no permits").isZero();
    assertThat(mine.tryAcquire(LONG_LEASE)).as("a semaphore never set has no permits").isEmpty();
    assertThat(mine.trySetPermits(2)).isTrue();
    assertThat(theirs.trySetPermits(5)).isFalse();
    assertThat(theirs.availablePermits()).isEqualTo(2);

    theirs.addPermits(2);
    assertThat(mine.availablePermits()).isEqualTo(4);
    mine.addPermits(-3);
    assertThat(theirs.availablePermits()).isEqualTo(1);
  }

  @Test
  @RequiresFeature(Feature.LEASED_SEMAPHORE)
  public void addPermitsRefusesATotalOutOfTheRangeOfAnInt() throws InterruptedException {
    String name = uniqueName("leased-overflow");
    LeasedSemaphore mine = client().leasedSemaphore(name);
    LeasedSemaphore theirs = newClient().leasedSemaphore(name);
    assertThat(mine.trySetPermits(Integer.MAX_VALUE - 1)).isTrue();

    assertThatThrownBy(() -> theirs.addPermits(2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(name);
    assertThat(mine.availablePermits()).as("nothing changed").isEqualTo(Integer.MAX_VALUE - 1);
    theirs.addPermits(1);
    assertThat(mine.availablePermits()).isEqualTo(Integer.MAX_VALUE);
    Lease permit = mine.acquire(SHORT_WAIT);
    assertThat(theirs.availablePermits()).isEqualTo(Integer.MAX_VALUE - 1);
    permit.release();

    LeasedSemaphore lowered = client().leasedSemaphore(uniqueName("leased-underflow"));
    lowered.addPermits(Integer.MIN_VALUE + 1);
    assertThatThrownBy(() -> lowered.addPermits(-2)).isInstanceOf(IllegalArgumentException.class);
    lowered.addPermits(-1);
    lowered.addPermits(Integer.MAX_VALUE);
    assertThat(lowered.availablePermits()).as("a total of -1: one permit owed").isEqualTo(-1);
    lowered.addPermits(2);
    assertThat(lowered.availablePermits()).isEqualTo(1);
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.PERMIT_LEASE_TIME})
  public void permitsHaveDistinctIds() throws InterruptedException {
    String name = uniqueName("leased-ids");
    LeasedSemaphore semaphore = client().leasedSemaphore(name);
    semaphore.trySetPermits(3);

    List<Lease> permits = new ArrayList<>();
    permits.add(semaphore.acquire(LONG_WAIT));
    permits.add(semaphore.acquire(LONG_WAIT, LONG_LEASE));
    permits.add(newClient().leasedSemaphore(name).tryAcquire(LONG_LEASE).orElseThrow());

    assertThat(permits).allSatisfy(permit -> assertThat(permit.name()).isEqualTo(name));
    assertThat(permits).allSatisfy(permit -> assertThat(permit.holderId()).isNotBlank());
    assertThat(permits).allSatisfy(permit -> assertThat(permit.isValid()).isTrue());
    assertThat(permits.stream().map(Lease::holderId).distinct()).hasSize(3);
    assertThat(semaphore.availablePermits()).isZero();
    for (Lease permit : permits) {
      permit.release();
    }
    assertThat(semaphore.availablePermits()).isEqualTo(3);
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.PERMIT_LEASE_TIME})
  public void atMostTheSetNumberOfPermitsIsGranted() throws InterruptedException {
    String name = uniqueName("leased-max");
    LeasedSemaphore mine = client().leasedSemaphore(name);
    LeasedSemaphore theirs = newClient().leasedSemaphore(name);
    mine.trySetPermits(2);
    Lease first = mine.acquire(LONG_WAIT, LONG_LEASE);
    Lease second = theirs.acquire(LONG_WAIT, LONG_LEASE);

    assertThat(mine.tryAcquire(LONG_LEASE)).isEmpty();
    assertThat(theirs.tryAcquire(LONG_LEASE)).isEmpty();
    assertThatThrownBy(() -> theirs.acquire(SHORT_WAIT, LONG_LEASE))
        .isInstanceOf(LockTimeoutException.class)
        .hasMessageContaining(name);
    assertThatThrownBy(() -> mine.acquire(SHORT_WAIT)).isInstanceOf(LockTimeoutException.class);
    assertThat(mine.availablePermits()).isZero();

    first.release();
    assertThat(theirs.availablePermits()).isEqualTo(1);
    Lease third = theirs.tryAcquire(LONG_LEASE).orElseThrow();
    assertThat(mine.availablePermits()).isZero();
    second.release();
    third.release();
    assertThat(mine.availablePermits()).isEqualTo(2);
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.PERMIT_LEASE_TIME})
  public void neverMorePermitsHeldThanSetUnderContention() throws InterruptedException {
    String name = uniqueName("leased-contention");
    int permits = 2;
    int threadsPerClient = 3;
    int rounds = 15;
    client().leasedSemaphore(name).trySetPermits(permits);
    List<Latchkey> clients = List.of(client(), newClient(), newClient());
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger mostInside = new AtomicInteger();

    Contention.run(
        executor(clients.size() * threadsPerClient),
        clients,
        threadsPerClient,
        Duration.ofSeconds(60),
        (latchkey, thread) -> {
          LeasedSemaphore semaphore = latchkey.leasedSemaphore(name);
          for (int i = 0; i < rounds; i++) {
            Lease permit = semaphore.acquire(Duration.ofSeconds(30), LONG_LEASE);
            try {
              mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
              Thread.yield();
              inside.decrementAndGet();
            } finally {
              permit.release();
            }
          }
        });

    assertThat(mostInside.get()).as("most permits held at once").isBetween(1, permits);
    assertThat(client().leasedSemaphore(name).availablePermits()).isEqualTo(permits);
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.PERMIT_LEASE_TIME})
  public void expiredPermitReturnsToThePool() throws Exception {
    String name = uniqueName("leased-expiry");
    LeasedSemaphore semaphore = client().leasedSemaphore(name);
    semaphore.trySetPermits(1);
    Lease expiring = semaphore.tryAcquire(SHORT_LEASE).orElseThrow();
    CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    expiring.onLost(lost::complete);
    LeasedSemaphore other = newClient().leasedSemaphore(name);

    Future<Lease> waiter = executor(1).submit(() -> other.acquire(LONG_WAIT, LONG_LEASE));

    Lease taken = Contention.succeeded(waiter, LONG_WAIT);
    assertThat(taken.holderId()).isNotEqualTo(expiring.holderId());
    assertThat(lost).as("the expired permit's loss listener").succeedsWithin(LONG_WAIT);
    assertThat(expiring.isValid()).isFalse();
    assertThatThrownBy(expiring::release).isInstanceOf(LeaseLostException.class);
    assertThat(semaphore.availablePermits())
        .as("releasing the lost permit did not free the new holder's")
        .isZero();
    taken.release();
    assertThat(semaphore.availablePermits()).isEqualTo(1);
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.PERMIT_LEASE_TIME})
  public void anotherClientReleasesByPermitId() throws InterruptedException {
    String name = uniqueName("leased-release-id");
    LeasedSemaphore mine = client().leasedSemaphore(name);
    LeasedSemaphore theirs = newClient().leasedSemaphore(name);
    mine.trySetPermits(1);
    Lease permit = mine.acquire(LONG_WAIT, LONG_LEASE);

    assertThat(theirs.release(permit.holderId())).isTrue();
    assertThat(mine.availablePermits()).isEqualTo(1);
    assertThat(theirs.release(permit.holderId())).as("released twice").isFalse();
    assertThat(theirs.release("no-such-permit")).as("unknown permit id").isFalse();
    assertThat(mine.availablePermits()).isEqualTo(1);

    assertThatThrownBy(permit::release)
        .as("the original lease learns that its permit is gone")
        .isInstanceOf(LeaseLostException.class);
    assertThat(mine.availablePermits()).isEqualTo(1);
  }

  @Test
  @RequiresFeature(Feature.LEASED_SEMAPHORE)
  public void permitReleasedElsewhereIsReportedLostByTheWatchdog() throws InterruptedException {
    String name = uniqueName("leased-lost");
    Latchkey renewing =
        newClient(o -> o.leaseTime(Duration.ofMillis(600)).renewInterval(Duration.ofMillis(200)));
    LeasedSemaphore semaphore = renewing.leasedSemaphore(name);
    semaphore.trySetPermits(1);
    Lease permit = semaphore.acquire(LONG_WAIT);
    CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    permit.onLost(lost::complete);

    assertThat(client().leasedSemaphore(name).release(permit.holderId())).isTrue();

    assertThat(lost).as("the loss listener").succeedsWithin(LONG_WAIT);
    assertThat(permit.isValid()).isFalse();
    assertThatThrownBy(permit::release).isInstanceOf(LeaseLostException.class);
    assertThat(semaphore.availablePermits()).isEqualTo(1);
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.PERMIT_LEASE_TIME})
  public void watchdogKeepsAPermitWithoutExplicitLease() throws InterruptedException {
    String name = uniqueName("leased-watchdog");
    Latchkey renewing =
        newClient(o -> o.leaseTime(Duration.ofMillis(600)).renewInterval(Duration.ofMillis(200)));
    LeasedSemaphore semaphore = renewing.leasedSemaphore(name);
    semaphore.trySetPermits(1);
    LeasedSemaphore other = client().leasedSemaphore(name);

    Lease permit = semaphore.acquire(LONG_WAIT);
    await("permit kept by the watchdog beyond three leases")
        .pollInterval(Duration.ofMillis(50))
        .during(Duration.ofMillis(1800))
        .atMost(Duration.ofSeconds(8))
        .until(() -> permit.isValid() && other.availablePermits() == 0);
    assertThat(other.tryAcquire(LONG_LEASE)).isEmpty();

    permit.release();
    assertThat(other.availablePermits()).isEqualTo(1);
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.PERMIT_LEASE_TIME})
  public void availablePermitsCountsExpiredPermitsAsFree() throws InterruptedException {
    String name = uniqueName("leased-available");
    LeasedSemaphore semaphore = client().leasedSemaphore(name);
    semaphore.trySetPermits(2);
    LeasedSemaphore other = newClient().leasedSemaphore(name);
    Lease expiring = semaphore.acquire(LONG_WAIT, SHORT_LEASE);
    Lease kept = semaphore.acquire(LONG_WAIT, LONG_LEASE);
    int availableWhileBothHeld = other.availablePermits();
    // Only meaningful if the short lease outlived the answer: the backend's lease is never shorter
    // than the client's view of it (a loaded machine may take longer than the lease).
    if (expiring.isValid()) {
      assertThat(availableWhileBothHeld).isZero();
    }

    await("the expired permit counts as free")
        .pollInterval(Duration.ofMillis(20))
        .atMost(Duration.ofSeconds(5))
        .until(() -> other.availablePermits() == 1);
    Optional<Lease> again = other.tryAcquire(LONG_LEASE);
    assertThat(again).isPresent();
    assertThat(other.availablePermits()).isZero();

    assertThatThrownBy(expiring::release).isInstanceOf(LeaseLostException.class);
    again.orElseThrow().release();
    kept.release();
    assertThat(other.availablePermits()).isEqualTo(2);
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.PERMIT_LEASE_TIME})
  public void acquireAsyncGetsAPermitWhenOneIsReleased() throws Exception {
    String name = uniqueName("leased-async");
    LeasedSemaphore mine = client().leasedSemaphore(name);
    mine.trySetPermits(1);
    Lease held = mine.acquire(LONG_WAIT, LONG_LEASE);
    LeasedSemaphore theirs = newClient().leasedSemaphore(name);

    CompletableFuture<Lease> waiting =
        theirs.acquireAsync(LONG_WAIT, LONG_LEASE).toCompletableFuture();
    assertStillWaiting("acquireAsync with no permit free", waiting);
    held.releaseAsync().toCompletableFuture().get();
    Lease granted = Contention.succeeded(waiting, LONG_WAIT);
    assertThat(granted.isValid()).isTrue();
    assertThat(mine.availablePermits()).isZero();

    assertThat(mine.acquireAsync(SHORT_WAIT, LONG_LEASE))
        .failsWithin(LONG_WAIT)
        .withThrowableOfType(ExecutionException.class)
        .withCauseInstanceOf(LockTimeoutException.class);
    granted.release();
    assertThat(mine.availablePermits()).isEqualTo(1);
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.PERMIT_LEASE_TIME})
  public void cancelledAcquireAsyncTakesNothing() throws InterruptedException {
    String name = uniqueName("leased-async-cancel");
    LeasedSemaphore mine = client().leasedSemaphore(name);
    mine.trySetPermits(1);
    Lease held = mine.acquire(LONG_WAIT, LONG_LEASE);
    LeasedSemaphore theirs = newClient().leasedSemaphore(name);

    CompletableFuture<Lease> waiting =
        theirs.acquireAsync(LONG_WAIT, LONG_LEASE).toCompletableFuture();
    assertStillWaiting("acquireAsync with no permit free", waiting);
    assertThat(waiting.cancel(true)).isTrue();
    held.release();

    await("the freed permit stays free (no abandoned waiter takes it)")
        .pollInterval(Duration.ofMillis(20))
        .during(Contention.SETTLE.multipliedBy(2))
        .atMost(Duration.ofSeconds(3))
        .until(() -> mine.availablePermits() == 1);
  }

  @Test
  @RequiresMissingFeature(Feature.LEASED_SEMAPHORE)
  public void leasedSemaphoreIsRefusedWithoutTheFeature() {
    assertThatThrownBy(() -> client().leasedSemaphore(uniqueName("leased-missing")))
        .isInstanceOfSatisfying(
            UnsupportedFeatureException.class,
            e -> assertThat(e.feature()).isEqualTo(Feature.LEASED_SEMAPHORE))
        .hasMessageContaining("LEASED_SEMAPHORE");
  }
}
