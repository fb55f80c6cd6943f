package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Contention.assertStillWaiting;
import static io.latchkey.testkit.contract.SemaphoreOperationsContract.assertRefused;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Feature;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LeasedSemaphore;
import io.latchkey.LockTimeoutException;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import io.latchkey.testkit.RequiresMissingFeature;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Conformance: the leased semaphore's counts, batches, lease updates and records.
 *
 * <ul>
 *   <li>{@link #availablePermitsIsTheTrueValueAfterLoweringTheTotal}: after {@code
 *       trySetPermits(10)}, {@code addPermits(5)}, {@code addPermits(-10)}, {@code addPermits(-10)}
 *       the available count is -5, as for the plain semaphore; with a permit granted it counts one
 *       less.
 *   <li>{@link #untimedAcquireWaitsForAsLongAsItTakes}: {@code acquire()} and {@code
 *       acquireAsync()} wait without a bound and get a watchdog-renewed permit once one is freed.
 *   <li>{@link #heldPermitsListsThisClientsValidPermits}: {@code heldPermits()} lists the ids and
 *       leases this client holds, not another client's, and not released ones.
 *   <li>{@link #severalPermitsAreTakenAllOrNone}: {@code tryAcquire(n)} and {@code acquire(n,
 *       wait)} take n permits with distinct ids and one shared fencing token, or none (empty list,
 *       {@link LockTimeoutException}); a waiter for n takes none until n are free.
 *   <li>{@link #aListOfPermitsIsReleasedAllOrNone}: {@code release(ids)} frees every permit, from
 *       any client, only if each is held; otherwise it frees none; a released lease of this client
 *       then refuses a second release.
 *   <li>{@link #updateLeaseTimeShortensAndLengthensAPermit}: a new lease replaces the old one,
 *       shorter (the permit returns to the pool; a watchdog permit of the updating client leaves
 *       the watchdog and its lease is lost when the new one ends) or longer (it outlives its first
 *       lease); expired and unknown ids answer false.
 *   <li>{@link #acquiredPermitsCountsGrantedPermits}: acquired and available counts, across
 *       clients.
 *   <li>{@link #deleteForgetsTotalAndPermits}: {@code delete} removes the total and the permits;
 *       holders learn of it as a lost lease; tokens granted afterwards still grow.
 *   <li>{@link #refusedWithoutBatches}, {@link #refusedWithoutLeaseUpdate}, {@link
 *       #refusedWithoutDeleteRecords}: a backend without those features refuses each call with
 *       {@link UnsupportedFeatureException}.
 * </ul>
 */
public abstract class LeasedSemaphoreOperationsContract extends ContractSupport {
  private static final Duration LONG_WAIT = Duration.ofSeconds(10);
  private static final Duration SHORT_WAIT = Duration.ofMillis(200);
  private static final Duration LONG_LEASE = Duration.ofSeconds(30);

  @Test
  @RequiresFeature(Feature.LEASED_SEMAPHORE)
  public void availablePermitsIsTheTrueValueAfterLoweringTheTotal() throws Exception {
    String name = uniqueName("leased-negative");
    LeasedSemaphore semaphore = client().leasedSemaphore(name);
    assertThat(semaphore.trySetPermits(10)).isTrue();
    semaphore.addPermits(5);
    semaphore.addPermits(-10);
    semaphore.addPermits(-10);
    assertThat(semaphore.availablePermits()).isEqualTo(-5);
    assertThatThrownBy(() -> semaphore.acquire(Duration.ZERO))
        .isInstanceOf(LockTimeoutException.class);

    semaphore.addPermits(6);
    Lease permit = semaphore.acquire(Duration.ZERO);
    semaphore.addPermits(-3);
    assertThat(newClient().leasedSemaphore(name).availablePermits()).isEqualTo(-3);
    permit.release();
    assertThat(semaphore.availablePermits()).isEqualTo(-2);
  }

  @Test
  @RequiresFeature(Feature.LEASED_SEMAPHORE)
  public void untimedAcquireWaitsForAsLongAsItTakes() throws Exception {
    String name = uniqueName("leased-untimed");
    LeasedSemaphore semaphore = client().leasedSemaphore(name);
    semaphore.trySetPermits(1);
    Lease held = semaphore.acquire();

    LeasedSemaphore other = newClient().leasedSemaphore(name);
    Future<Lease> waiter = executor(1).submit(() -> other.acquire());
    CompletableFuture<Lease> asyncWaiter = other.acquireAsync().toCompletableFuture();
    assertStillWaiting("untimed acquire of a permit", waiter);
    assertThat(asyncWaiter).isNotDone();

    semaphore.addPermits(1);
    held.release();
    Lease first = Contention.succeeded(waiter, LONG_WAIT);
    assertThat(asyncWaiter).succeedsWithin(LONG_WAIT);
    Lease second = asyncWaiter.join();
    assertThat(first.isValid()).isTrue();
    assertThat(second.isValid()).isTrue();
    first.release();
    second.release();
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.PERMIT_LEASE_TIME})
  public void heldPermitsListsThisClientsValidPermits() throws Exception {
    String name = uniqueName("leased-held");
    LeasedSemaphore semaphore = client().leasedSemaphore(name);
    semaphore.trySetPermits(3);
    Lease watched = semaphore.acquire(Duration.ZERO);
    Lease leased = semaphore.acquire(Duration.ZERO, LONG_LEASE);
    Lease theirs = newClient().leasedSemaphore(name).acquire(Duration.ZERO);

    assertThat(semaphore.heldPermits())
        .extracting(Lease::holderId)
        .containsExactlyInAnyOrder(watched.holderId(), leased.holderId());
    assertThat(semaphore.heldPermits())
        .allSatisfy(
            permit -> {
              assertThat(permit.name()).isEqualTo(name);
              assertThat(permit.remaining()).isPositive().isLessThanOrEqualTo(LONG_LEASE);
            });
    watched.release();
    assertThat(semaphore.heldPermits())
        .extracting(Lease::holderId)
        .containsExactly(leased.holderId());
    assertThat(client().leasedSemaphore(uniqueName("leased-held-other")).heldPermits()).isEmpty();
    leased.release();
    theirs.release();
    assertThat(semaphore.heldPermits()).isEmpty();
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.PERMIT_BATCHES})
  public void severalPermitsAreTakenAllOrNone() throws Exception {
    String name = uniqueName("leased-batch");
    LeasedSemaphore semaphore = client().leasedSemaphore(name);
    semaphore.trySetPermits(3);
    List<Lease> two = semaphore.acquire(2, Duration.ZERO);
    assertThat(two).hasSize(2);
    assertThat(two).extracting(Lease::holderId).doesNotHaveDuplicates();
    assertThat(two).extracting(Lease::fencingToken).containsOnly(two.get(0).fencingToken());
    assertThat(two).allSatisfy(permit -> assertThat(permit.isValid()).isTrue());
    assertThat(semaphore.availablePermits()).isEqualTo(1);

    LeasedSemaphore other = newClient().leasedSemaphore(name);
    assertThat(other.tryAcquire(2)).as("only one free: none taken").isEmpty();
    assertThatThrownBy(() -> other.acquire(2, SHORT_WAIT, LONG_LEASE))
        .isInstanceOf(LockTimeoutException.class);
    assertThat(semaphore.availablePermits()).as("nothing taken by the refusals").isEqualTo(1);

    Future<List<Lease>> waiter = executor(1).submit(() -> other.acquire(3, LONG_WAIT));
    CompletableFuture<List<Lease>> asyncWaiter =
        other.acquireAsync(1, LONG_WAIT, LONG_LEASE).toCompletableFuture();
    assertThat(asyncWaiter).succeedsWithin(LONG_WAIT);
    assertStillWaiting("a waiter for 3 permits", waiter);
    assertThat(semaphore.availablePermits()).as("the waiter for 3 holds none").isZero();

    two.forEach(Lease::release);
    asyncWaiter.join().forEach(Lease::release);
    List<Lease> three = Contention.succeeded(waiter, LONG_WAIT);
    assertThat(three).hasSize(3);
    assertThat(three.get(0).fencingToken()).isGreaterThan(two.get(0).fencingToken());
    assertThat(semaphore.availablePermits()).isZero();
    three.forEach(Lease::release);
    assertThat(semaphore.availablePermits()).isEqualTo(3);
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.PERMIT_BATCHES})
  public void aListOfPermitsIsReleasedAllOrNone() throws Exception {
    String name = uniqueName("leased-release-list");
    LeasedSemaphore semaphore = client().leasedSemaphore(name);
    semaphore.trySetPermits(3);
    List<Lease> permits = semaphore.tryAcquire(3);
    assertThat(permits).hasSize(3);
    List<String> ids = permits.stream().map(Lease::holderId).toList();
    LeasedSemaphore other = newClient().leasedSemaphore(name);

    assertThat(semaphore.release(ids.get(2))).isTrue();
    assertThat(other.release(ids)).as("one of them is no longer held").isFalse();
    assertThat(semaphore.availablePermits()).as("none released").isEqualTo(1);
    assertThat(permits.get(0).isValid()).isTrue();

    assertThat(other.release(ids.subList(0, 2))).isTrue();
    assertThat(semaphore.availablePermits()).isEqualTo(3);
    assertThat(other.release(ids.subList(0, 2))).as("once").isFalse();

    List<Lease> mine = semaphore.acquire(2, Duration.ZERO);
    List<String> mineIds = mine.stream().map(Lease::holderId).toList();
    assertThat(semaphore.release(mineIds)).isTrue();
    assertThat(semaphore.heldPermits())
        .as("this client's own permits are forgotten")
        .extracting(Lease::holderId)
        .doesNotContainAnyElementsOf(mineIds);
    assertThatThrownBy(mine.get(0)::release).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> semaphore.release(List.of()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> semaphore.release(List.of(ids.get(0), ids.get(0))))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  @RequiresFeature({
    Feature.LEASED_SEMAPHORE,
    Feature.PERMIT_LEASE_UPDATE,
    Feature.PERMIT_LEASE_TIME
  })
  public void updateLeaseTimeShortensAndLengthensAPermit() throws Exception {
    String name = uniqueName("leased-update");
    LeasedSemaphore semaphore = client().leasedSemaphore(name);
    semaphore.trySetPermits(2);
    LeasedSemaphore other = newClient().leasedSemaphore(name);

    // Shortened by another client: the permit runs out early.
    Lease shortened = semaphore.acquire(Duration.ZERO, LONG_LEASE);
    assertThat(other.updateLeaseTime(shortened.holderId(), Duration.ofMillis(300))).isTrue();
    Awaiting.eventually().until(() -> semaphore.availablePermits() == 2);
    assertThat(semaphore.updateLeaseTime(shortened.holderId(), LONG_LEASE))
        .as("an expired permit")
        .isFalse();

    // Shortened by its own client, off the watchdog: its lease says so.
    Lease mine = semaphore.acquire(Duration.ZERO);
    assertThat(semaphore.updateLeaseTime(mine.holderId(), Duration.ofMillis(300))).isTrue();
    assertThat(mine.remaining()).isLessThanOrEqualTo(Duration.ofMillis(300));
    Awaiting.eventually().until(() -> !mine.isValid());
    assertThatThrownBy(mine::release).isInstanceOf(LeaseLostException.class);

    // Lengthened: outlives its first lease.
    Lease lengthened = semaphore.acquire(Duration.ZERO, Duration.ofMillis(500));
    assertThat(semaphore.updateLeaseTime(lengthened.holderId(), LONG_LEASE)).isTrue();
    Awaiting.throughout(Duration.ofSeconds(1))
        .until(() -> lengthened.isValid() && other.availablePermits() == 1);
    lengthened.release();
    assertThat(semaphore.updateLeaseTime("no-such-permit", LONG_LEASE)).isFalse();
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.SYNCHRONIZER_INSPECTION, Feature.ADMIN})
  public void acquiredPermitsCountsGrantedPermits() throws Exception {
    String name = uniqueName("leased-acquired");
    LeasedSemaphore semaphore = client().leasedSemaphore(name);
    assertThat(semaphore.acquiredPermits()).isZero();
    semaphore.trySetPermits(3);
    Lease mine = semaphore.acquire(Duration.ZERO);
    Lease theirs = newClient().leasedSemaphore(name).acquire(Duration.ZERO, LONG_LEASE);
    assertThat(semaphore.acquiredPermits()).isEqualTo(2);
    assertThat(semaphore.availablePermits()).isEqualTo(1);
    mine.release();
    theirs.release();
    assertThat(semaphore.acquiredPermits()).isZero();
    assertThat(semaphore.availablePermits()).isEqualTo(3);
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.DELETE_RECORDS})
  public void deleteForgetsTotalAndPermits() throws Exception {
    String name = uniqueName("leased-delete");
    LeasedSemaphore semaphore = client().leasedSemaphore(name);
    assertThat(semaphore.isExists()).isFalse();
    assertThat(semaphore.delete()).isFalse();
    semaphore.trySetPermits(2);
    assertThat(semaphore.isExists()).isTrue();
    Lease permit = semaphore.acquire(Duration.ZERO);

    LeasedSemaphore other = newClient().leasedSemaphore(name);
    assertThat(other.delete()).isTrue();
    assertThat(semaphore.isExists()).isFalse();
    assertThat(semaphore.availablePermits()).isZero();
    Awaiting.eventually().until(() -> !permit.isValid());
    assertThatThrownBy(permit::release).isInstanceOf(LeaseLostException.class);

    assertThat(other.trySetPermits(1)).as("set again from scratch").isTrue();
    Lease next = other.acquire(Duration.ZERO);
    assertThat(next.fencingToken()).isGreaterThan(permit.fencingToken());
    next.release();
    assertThat(other.delete()).isTrue();
  }

  @Test
  @RequiresFeature(Feature.LEASED_SEMAPHORE)
  @RequiresMissingFeature(Feature.PERMIT_BATCHES)
  public void refusedWithoutBatches() {
    LeasedSemaphore semaphore = client().leasedSemaphore(uniqueName("leased-no-batches"));
    assertRefused(() -> semaphore.tryAcquire(2), Feature.PERMIT_BATCHES);
    assertRefused(() -> semaphore.acquire(2, Duration.ZERO), Feature.PERMIT_BATCHES);
    assertRefused(() -> semaphore.release(List.of("a", "b")), Feature.PERMIT_BATCHES);
  }

  @Test
  @RequiresFeature(Feature.LEASED_SEMAPHORE)
  @RequiresMissingFeature(Feature.PERMIT_LEASE_UPDATE)
  public void refusedWithoutLeaseUpdate() {
    LeasedSemaphore semaphore = client().leasedSemaphore(uniqueName("leased-no-update"));
    assertRefused(() -> semaphore.updateLeaseTime("a", LONG_LEASE), Feature.PERMIT_LEASE_UPDATE);
  }

  @Test
  @RequiresFeature(Feature.LEASED_SEMAPHORE)
  @RequiresMissingFeature(Feature.DELETE_RECORDS)
  public void refusedWithoutDeleteRecords() {
    LeasedSemaphore semaphore = client().leasedSemaphore(uniqueName("leased-no-delete"));
    assertRefused(semaphore::delete, Feature.DELETE_RECORDS);
    assertRefused(semaphore::isExists, Feature.DELETE_RECORDS);
  }
}
