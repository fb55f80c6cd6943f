package io.latchkey.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Feature;
import io.latchkey.LatchInfo;
import io.latchkey.LeasedSemaphoreInfo;
import io.latchkey.PermitInfo;
import io.latchkey.SemaphoreInfo;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.AdminStore;
import io.latchkey.spi.LatchStore;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.SemaphoreStore;
import io.latchkey.spi.Wakeup;
import io.latchkey.testkit.RequiresFeature;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * SPI conformance: the optional operations of {@link SemaphoreStore}, {@link LeasedSemaphoreStore},
 * {@link LatchStore} and {@link AdminStore} that issue 13 added, each under its feature, read back
 * from another connection.
 *
 * <ul>
 *   <li>{@link #semaphoreIsDrainedAndSet}: {@code drainPermits} takes every available permit (none
 *       of a count that is not positive, which it leaves as it was); {@code setPermits} sets the
 *       count and wakes waiters ({@link Feature#DRAIN_AND_SET_PERMITS}).
 *   <li>{@link #semaphoreRecordIsDeletedAndOnlyAnExistingOneGetsPermits}: {@code exists}, {@code
 *       delete}, and {@code addPermitsIfExists} that changes nothing without a record ({@link
 *       Feature#DELETE_RECORDS}).
 *   <li>{@link #deletedLeasedSemaphoreForgetsTotalAndPermitsButTokensGrow}: deleting a leased
 *       semaphore frees its permits and forgets its total; tokens of later grants still grow.
 *   <li>{@link #deletedLatchWakesEveryWaiter}: {@code deleteLatch} opens a latch that counts down
 *       and wakes every waiter, and says false for one at zero.
 *   <li>{@link #permitBatchIsGrantedAndReleasedAllOrNone}: {@code tryAcquireAll} grants all the ids
 *       under one token or none, answers a repeated batch with its token without taking more, and
 *       {@code releaseAll} frees all or none ({@link Feature#PERMIT_BATCHES}).
 *   <li>{@link #permitLeaseIsUpdated}: {@code updateLease} lengthens and shortens a held permit's
 *       lease and refuses one that is not held ({@link Feature#PERMIT_LEASE_UPDATE}).
 *   <li>{@link #synchronizersAreInspected}: {@code AdminStore} shows semaphores, leased semaphores
 *       with their permits and clients, and latches, by name and in its lists ({@link
 *       Feature#SYNCHRONIZER_INSPECTION}).
 * </ul>
 */
public abstract class SynchronizerStoreContract extends SpiContractSupport {

  @Test
  @RequiresFeature({Feature.SEMAPHORE, Feature.DRAIN_AND_SET_PERMITS})
  void semaphoreIsDrainedAndSet() {
    String name = uniqueName("spi-semaphore-drain");
    SemaphoreStore mine = open().semaphores();
    SemaphoreStore theirs = open().semaphores();
    @Nullable Wakeups wakeups =
        has(Feature.WAKEUP_PUSH) ? subscribe(open(), ResourceType.SEMAPHORE, name) : null;
    assertThat(join(mine.drainPermits(name))).as("never set").isZero();
    assertThat(join(mine.trySetPermits(name, 3))).isTrue();

    assertThat(join(theirs.drainPermits(name))).isEqualTo(3);
    assertThat(join(mine.availablePermits(name))).isZero();
    assertThat(join(mine.drainPermits(name))).as("drained already").isZero();
    join(mine.addPermits(name, -2));
    assertThat(join(theirs.drainPermits(name))).as("a negative count").isZero();
    assertThat(join(mine.availablePermits(name))).as("left as it was").isEqualTo(-2);

    join(theirs.setPermits(name, 5));
    assertThat(join(mine.availablePermits(name))).isEqualTo(5);
    if (wakeups != null) {
      assertThat(wakeups.next().slots()).as("slots of the wake-up").isPositive();
    }
    join(theirs.setPermits(name, 0));
    assertThat(join(mine.availablePermits(name))).isZero();
  }

  @Test
  @RequiresFeature({Feature.SEMAPHORE, Feature.DELETE_RECORDS})
  void semaphoreRecordIsDeletedAndOnlyAnExistingOneGetsPermits() {
    String name = uniqueName("spi-semaphore-delete");
    SemaphoreStore mine = open().semaphores();
    SemaphoreStore theirs = open().semaphores();
    assertThat(join(mine.exists(name))).as("never set").isFalse();
    assertThat(join(mine.addPermitsIfExists(name, 2))).as("added to no record").isFalse();
    assertThat(join(theirs.exists(name))).as("not created by a refused add").isFalse();

    assertThat(join(mine.trySetPermits(name, 1))).isTrue();
    assertThat(join(theirs.exists(name))).isTrue();
    assertThat(join(theirs.addPermitsIfExists(name, 2))).isTrue();
    assertThat(join(mine.availablePermits(name))).isEqualTo(3);

    assertThat(join(theirs.delete(name))).isTrue();
    assertThat(join(mine.exists(name))).isFalse();
    assertThat(join(mine.availablePermits(name))).isZero();
    assertThat(join(mine.delete(name))).as("deleted already").isFalse();
    assertThat(join(mine.addPermitsIfExists(name, 1))).as("added to a deleted record").isFalse();
    assertThat(join(theirs.exists(name))).isFalse();
    assertThat(join(theirs.trySetPermits(name, 4))).as("set again").isTrue();
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.DELETE_RECORDS})
  void deletedLeasedSemaphoreForgetsTotalAndPermitsButTokensGrow() {
    String name = uniqueName("spi-leased-delete");
    LeasedSemaphoreStore mine = open().leasedSemaphores();
    LeasedSemaphoreStore theirs = open().leasedSemaphores();
    assertThat(join(mine.exists(name))).as("never set").isFalse();
    assertThat(join(mine.delete(name))).as("never set").isFalse();
    assertThat(join(mine.trySetPermits(name, 1))).isTrue();
    String permitId = owner("permit");
    long token = granted(join(mine.tryAcquire(name, permitId, LONG_LEASE))).fencingToken();
    assertThat(join(theirs.exists(name))).isTrue();

    assertThat(join(theirs.delete(name))).isTrue();
    assertThat(join(mine.exists(name))).isFalse();
    assertThat(join(mine.availablePermits(name))).isZero();
    assertThat(join(mine.release(name, permitId))).as("a permit of the deleted record").isFalse();
    assertThat(join(theirs.delete(name))).as("deleted already").isFalse();

    assertThat(join(theirs.trySetPermits(name, 1))).as("set again").isTrue();
    AcquireResult next = granted(join(theirs.tryAcquire(name, owner("permit"), LONG_LEASE)));
    assertThat(next.fencingToken()).as("the token after a delete").isGreaterThan(token);
  }

  @Test
  @RequiresFeature({Feature.COUNT_DOWN_LATCH, Feature.DELETE_RECORDS})
  void deletedLatchWakesEveryWaiter() {
    String name = uniqueName("spi-latch-delete");
    LatchStore mine = open().latches();
    LatchStore theirs = open().latches();
    @Nullable Wakeups wakeups =
        has(Feature.WAKEUP_PUSH) ? subscribe(open(), ResourceType.COUNT_DOWN_LATCH, name) : null;
    assertThat(join(mine.deleteLatch(name))).as("never set").isFalse();
    assertThat(join(mine.trySetCount(name, 2))).isTrue();

    assertThat(join(theirs.deleteLatch(name))).isTrue();
    assertThat(join(mine.count(name))).isZero();
    if (wakeups != null) {
      assertThat(wakeups.next()).isEqualTo(Wakeup.of(Wakeup.ALL));
    }
    assertThat(join(theirs.deleteLatch(name))).as("at zero").isFalse();
    assertThat(join(theirs.trySetCount(name, 1))).as("set again").isTrue();
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.PERMIT_BATCHES})
  void permitBatchIsGrantedAndReleasedAllOrNone() {
    String name = uniqueName("spi-leased-batch");
    LeasedSemaphoreStore mine = open().leasedSemaphores();
    LeasedSemaphoreStore theirs = open().leasedSemaphores();
    @Nullable Wakeups wakeups =
        has(Feature.WAKEUP_PUSH) ? subscribe(open(), ResourceType.LEASED_SEMAPHORE, name) : null;
    assertThat(join(mine.trySetPermits(name, 3))).isTrue();
    List<String> batch = List.of(owner("permit"), owner("permit"));

    AcquireResult granted = granted(join(mine.tryAcquireAll(name, batch, LONG_LEASE)));
    assertThat(granted.holds()).as("permits of the batch").isEqualTo(2);
    assertThat(join(theirs.availablePermits(name))).isEqualTo(1);
    busy(
        join(theirs.tryAcquireAll(name, List.of(owner("permit"), owner("permit")), LONG_LEASE)),
        LONG_LEASE);
    assertThat(join(mine.availablePermits(name))).as("nothing taken by a refusal").isEqualTo(1);
    AcquireResult again = granted(join(theirs.tryAcquireAll(name, batch, LONG_LEASE)));
    assertThat(again.fencingToken()).as("the same batch again").isEqualTo(granted.fencingToken());
    assertThat(join(mine.availablePermits(name))).as("nothing more taken").isEqualTo(1);

    assertThat(join(theirs.releaseAll(name, List.of(batch.get(0), owner("unknown")))))
        .as("a list with an id not held")
        .isFalse();
    assertThat(join(mine.availablePermits(name))).as("nothing freed").isEqualTo(1);
    assertThat(join(theirs.releaseAll(name, batch))).isTrue();
    assertThat(join(mine.availablePermits(name))).isEqualTo(3);
    if (wakeups != null) {
      assertThat(wakeups.next().slots()).as("slots of the wake-up").isPositive();
    }
    assertThat(join(mine.releaseAll(name, batch))).as("released already").isFalse();
  }

  @Test
  @RequiresFeature({
    Feature.LEASED_SEMAPHORE,
    Feature.PERMIT_LEASE_UPDATE,
    Feature.PERMIT_LEASE_TIME,
    Feature.ADMIN,
    Feature.SYNCHRONIZER_INSPECTION
  })
  void permitLeaseIsUpdated() {
    String name = uniqueName("spi-leased-update");
    LatchkeyBackend backend = open();
    LeasedSemaphoreStore permits = backend.leasedSemaphores();
    assertThat(join(permits.trySetPermits(name, 1))).isTrue();
    String permitId = owner("permit");
    granted(join(permits.tryAcquire(name, permitId, BRIEF_LEASE)));

    assertThat(join(open().leasedSemaphores().updateLease(name, permitId, LONG_LEASE))).isTrue();
    assertThat(remainingLease(backend, name)).as("lengthened").isGreaterThan(BRIEF_LEASE);
    assertThat(join(permits.updateLease(name, permitId, SHORT_LEASE))).isTrue();
    assertThat(remainingLease(backend, name))
        .as("shortened")
        .isLessThanOrEqualTo(SHORT_LEASE + CLOCK_MARGIN);

    Awaiting.eventually().until(() -> join(permits.availablePermits(name)) == 1);
    assertThat(join(permits.updateLease(name, permitId, LONG_LEASE))).as("expired").isFalse();
    assertThat(join(permits.updateLease(name, owner("unknown"), LONG_LEASE)))
        .as("an unknown id")
        .isFalse();
    assertThat(join(permits.availablePermits(name))).as("not brought back").isEqualTo(1);
  }

  /** The remaining lease of the one permit of a leased semaphore, or 0 if none is held. */
  private static long remainingLease(LatchkeyBackend backend, String name) {
    List<PermitInfo> held =
        join(backend.admin().inspectLeasedSemaphore(name)).orElseThrow().permits();
    return held.isEmpty() ? 0 : held.get(0).remainingLease().toMillis();
  }

  @Test
  @RequiresFeature({
    Feature.SEMAPHORE,
    Feature.LEASED_SEMAPHORE,
    Feature.COUNT_DOWN_LATCH,
    Feature.ADMIN,
    Feature.SYNCHRONIZER_INSPECTION
  })
  void synchronizersAreInspected() {
    String name = uniqueName("spi-inspect-sync");
    LatchkeyBackend holder = open();
    AdminStore admin = open().admin();
    assertThat(join(admin.inspectSemaphore(name))).isEmpty();
    assertThat(join(admin.inspectLeasedSemaphore(name))).isEmpty();
    assertThat(join(admin.inspectLatch(name))).isEmpty();
    assertThat(join(holder.semaphores().trySetPermits(name, 2))).isTrue();
    assertThat(join(holder.leasedSemaphores().trySetPermits(name, 3))).isTrue();
    assertThat(join(holder.latches().trySetCount(name, 4))).isTrue();
    String permitId = owner("permit");
    long token =
        granted(join(holder.leasedSemaphores().tryAcquire(name, permitId, LONG_LEASE)))
            .fencingToken();

    SemaphoreInfo semaphore = new SemaphoreInfo(name, 2);
    assertThat(join(admin.inspectSemaphore(name))).contains(semaphore);
    assertThat(join(admin.listSemaphores())).contains(semaphore);
    LatchInfo latch = new LatchInfo(name, 4);
    assertThat(join(admin.inspectLatch(name))).contains(latch);
    assertThat(join(admin.listLatches())).contains(latch);
    LeasedSemaphoreInfo leased = join(admin.inspectLeasedSemaphore(name)).orElseThrow();
    assertThat(leased.totalPermits()).isEqualTo(3);
    assertThat(leased.permits()).hasSize(1);
    PermitInfo permit = leased.permits().get(0);
    assertThat(permit.permitId()).isEqualTo(permitId);
    assertThat(permit.fencingToken()).isEqualTo(token);
    assertThat(permit.remainingLease())
        .isPositive()
        .isLessThanOrEqualTo(Duration.ofMillis(LONG_LEASE));
    assertThat(join(admin.listLeasedSemaphores()))
        .filteredOn(listed -> listed.name().equals(name))
        .singleElement()
        .extracting(LeasedSemaphoreInfo::acquiredPermits)
        .isEqualTo(1);
    assertThat(join(admin.listSemaphores()))
        .extracting(SemaphoreInfo::name)
        .isSortedAccordingTo(String::compareTo);
  }
}
