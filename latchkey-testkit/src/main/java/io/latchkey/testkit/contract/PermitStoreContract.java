package io.latchkey.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Feature;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.LatchStore;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.SemaphoreStore;
import io.latchkey.spi.Wakeup;
import io.latchkey.testkit.RequiresFeature;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * SPI conformance: the stores of counted resources, {@link SemaphoreStore}, {@link
 * LeasedSemaphoreStore} and {@link LatchStore}, read back through {@code availablePermits} and
 * {@code count} from another connection.
 *
 * <ul>
 *   <li>{@link #semaphoreIsSetOnlyOnce}: a semaphore never set has no permits; the first {@code
 *       trySetPermits} wins.
 *   <li>{@link #semaphoreTakesAllOrNothing}: {@code tryAcquire} takes exactly the permits asked for
 *       or, if fewer are available, none.
 *   <li>{@link #semaphoreAddPermitsChangesTheCountAndWakes}: {@code addPermits} raises and lowers
 *       the available permits; raising them publishes a wake-up ({@link Feature#WAKEUP_PUSH}).
 *   <li>{@link #leasedPermitsAreGrantedWithGrowingTokens}: permits up to the total are granted with
 *       growing tokens; then a refusal says when the earliest lease runs out.
 *   <li>{@link #samePermitIdTakesOnePermit}: the same permit id again (an answer that was lost) is
 *       granted under the same token without taking a second permit, even when no permit is free.
 *   <li>{@link #leasedPermitIsReleasedOnce}: a release by id frees the permit once; a second
 *       release, or one of an unknown id, returns false; a release publishes a wake-up ({@link
 *       Feature#WAKEUP_PUSH}).
 *   <li>{@link #expiredLeasedPermitIsFree}: a permit whose lease ran out counts as free, cannot be
 *       released, and goes to another id.
 *   <li>{@link #latchCountsDownToZero}: {@code trySetCount} only while at zero, {@code countDown}
 *       returns the count left and stops at zero, after which the latch can be set again.
 *   <li>{@link #latchAtZeroWakesEveryWaiter}: the count down to zero publishes a wake-up for every
 *       waiter ({@link Feature#WAKEUP_PUSH}).
 * </ul>
 */
public abstract class PermitStoreContract extends SpiContractSupport {

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  void semaphoreIsSetOnlyOnce() {
    String name = uniqueName("spi-semaphore-set");
    SemaphoreStore mine = open().semaphores();
    SemaphoreStore theirs = open().semaphores();

    assertThat(join(theirs.availablePermits(name))).as("never set").isZero();
    assertThat(join(mine.tryAcquire(name, 1))).as("never set").isFalse();
    assertThat(join(mine.trySetPermits(name, 3))).isTrue();
    assertThat(join(theirs.trySetPermits(name, 5))).isFalse();
    assertThat(join(theirs.availablePermits(name))).isEqualTo(3);
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  void semaphoreTakesAllOrNothing() {
    String name = uniqueName("spi-semaphore-take");
    SemaphoreStore mine = open().semaphores();
    SemaphoreStore theirs = open().semaphores();
    assertThat(join(mine.trySetPermits(name, 3))).isTrue();

    assertThat(join(mine.tryAcquire(name, 2))).isTrue();
    assertThat(join(theirs.availablePermits(name))).isEqualTo(1);
    assertThat(join(theirs.tryAcquire(name, 2))).as("two of one").isFalse();
    assertThat(join(mine.availablePermits(name))).as("nothing taken by a refusal").isEqualTo(1);
    assertThat(join(theirs.tryAcquire(name, 1))).isTrue();
    assertThat(join(mine.availablePermits(name))).isZero();
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  void semaphoreAddPermitsChangesTheCountAndWakes() {
    String name = uniqueName("spi-semaphore-add");
    LatchkeyBackend backend = open();
    SemaphoreStore semaphores = backend.semaphores();
    @Nullable Wakeups wakeups =
        has(Feature.WAKEUP_PUSH) ? subscribe(open(), ResourceType.SEMAPHORE, name) : null;
    assertThat(join(semaphores.trySetPermits(name, 1))).isTrue();

    join(semaphores.addPermits(name, 2));
    assertThat(join(semaphores.availablePermits(name))).isEqualTo(3);
    if (wakeups != null) {
      assertThat(wakeups.next().slots()).as("slots of the wake-up").isPositive();
    }
    join(semaphores.addPermits(name, -2));
    assertThat(join(semaphores.availablePermits(name))).isEqualTo(1);
  }

  @Test
  @RequiresFeature(Feature.LEASED_SEMAPHORE)
  void leasedPermitsAreGrantedWithGrowingTokens() {
    String name = uniqueName("spi-leased-grant");
    LeasedSemaphoreStore mine = open().leasedSemaphores();
    LeasedSemaphoreStore theirs = open().leasedSemaphores();
    assertThat(join(mine.tryAcquire(name, owner("permit"), LONG_LEASE)).isGranted())
        .as("a semaphore never set has no permits")
        .isFalse();
    assertThat(join(mine.trySetPermits(name, 2))).isTrue();
    assertThat(join(theirs.trySetPermits(name, 5))).isFalse();

    long earliestLease = 5_000;
    AcquireResult first = granted(join(mine.tryAcquire(name, owner("permit"), LONG_LEASE)));
    AcquireResult second = granted(join(theirs.tryAcquire(name, owner("permit"), earliestLease)));
    assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
    assertThat(join(mine.availablePermits(name))).isZero();

    busy(join(theirs.tryAcquire(name, owner("permit"), LONG_LEASE)), earliestLease);
    assertThat(join(mine.availablePermits(name))).as("nothing taken by a refusal").isZero();
  }

  @Test
  @RequiresFeature(Feature.LEASED_SEMAPHORE)
  void samePermitIdTakesOnePermit() {
    String name = uniqueName("spi-leased-same-id");
    LatchkeyBackend backend = open();
    LeasedSemaphoreStore permits = backend.leasedSemaphores();
    assertThat(join(permits.trySetPermits(name, 2))).isTrue();
    String permitId = owner("permit");

    AcquireResult first = granted(join(permits.tryAcquire(name, permitId, LONG_LEASE)));
    AcquireResult again =
        granted(join(open().leasedSemaphores().tryAcquire(name, permitId, LONG_LEASE)));

    assertThat(again.fencingToken()).isEqualTo(first.fencingToken());
    assertThat(join(permits.availablePermits(name))).isEqualTo(1);
    granted(join(permits.tryAcquire(name, owner("permit"), LONG_LEASE)));
    assertThat(granted(join(permits.tryAcquire(name, permitId, LONG_LEASE))).fencingToken())
        .as("the same id again with no permit free")
        .isEqualTo(first.fencingToken());
  }

  @Test
  @RequiresFeature(Feature.LEASED_SEMAPHORE)
  void leasedPermitIsReleasedOnce() {
    String name = uniqueName("spi-leased-release");
    LeasedSemaphoreStore mine = open().leasedSemaphores();
    LeasedSemaphoreStore theirs = open().leasedSemaphores();
    @Nullable Wakeups wakeups =
        has(Feature.WAKEUP_PUSH) ? subscribe(open(), ResourceType.LEASED_SEMAPHORE, name) : null;
    assertThat(join(mine.trySetPermits(name, 1))).isTrue();
    String permitId = owner("permit");
    granted(join(mine.tryAcquire(name, permitId, LONG_LEASE)));

    assertThat(join(theirs.release(name, permitId))).as("released by id elsewhere").isTrue();
    assertThat(join(mine.release(name, permitId))).as("a second release").isFalse();
    assertThat(join(mine.release(name, owner("unknown")))).as("an unknown id").isFalse();
    assertThat(join(theirs.availablePermits(name))).isEqualTo(1);
    if (wakeups != null) {
      assertThat(wakeups.next().slots()).as("slots of the wake-up").isPositive();
    }
    granted(join(theirs.tryAcquire(name, owner("permit"), LONG_LEASE)));
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.PERMIT_LEASE_TIME})
  void expiredLeasedPermitIsFree() {
    String name = uniqueName("spi-leased-expiry");
    LeasedSemaphoreStore mine = open().leasedSemaphores();
    LeasedSemaphoreStore theirs = open().leasedSemaphores();
    assertThat(join(mine.trySetPermits(name, 1))).isTrue();
    String permitId = owner("permit");
    long token =
        granted(join(mine.tryAcquireWithLease(name, permitId, BRIEF_LEASE))).fencingToken();
    busy(join(theirs.tryAcquire(name, owner("permit"), LONG_LEASE)), BRIEF_LEASE);

    Awaiting.eventually().until(() -> join(theirs.availablePermits(name)) == 1);

    assertThat(join(mine.release(name, permitId))).as("release of an expired permit").isFalse();
    AcquireResult next = granted(join(theirs.tryAcquire(name, owner("permit"), LONG_LEASE)));
    assertThat(next.fencingToken()).isGreaterThan(token);
  }

  @Test
  @RequiresFeature(Feature.COUNT_DOWN_LATCH)
  void latchCountsDownToZero() {
    String name = uniqueName("spi-latch");
    LatchStore mine = open().latches();
    LatchStore theirs = open().latches();

    assertThat(join(theirs.count(name))).as("never set").isZero();
    assertThat(join(mine.trySetCount(name, 2))).isTrue();
    assertThat(join(theirs.trySetCount(name, 5))).as("set while counting").isFalse();
    assertThat(join(theirs.count(name))).isEqualTo(2);
    assertThat(join(theirs.countDown(name))).isEqualTo(1);
    assertThat(join(mine.count(name))).isEqualTo(1);
    assertThat(join(mine.countDown(name))).isZero();
    assertThat(join(theirs.count(name))).isZero();
    assertThat(join(theirs.countDown(name))).as("below zero").isZero();
    assertThat(join(theirs.count(name))).isZero();
    assertThat(join(theirs.trySetCount(name, 1))).as("set again at zero").isTrue();
    assertThat(join(mine.count(name))).isEqualTo(1);
  }

  @Test
  @RequiresFeature({Feature.COUNT_DOWN_LATCH, Feature.WAKEUP_PUSH})
  void latchAtZeroWakesEveryWaiter() {
    String name = uniqueName("spi-latch-wake");
    LatchStore latches = open().latches();
    Wakeups wakeups = subscribe(open(), ResourceType.COUNT_DOWN_LATCH, name);
    assertThat(join(latches.trySetCount(name, 2))).isTrue();

    join(latches.countDown(name));
    wakeups.assertNoneArrives();
    join(latches.countDown(name));

    assertThat(wakeups.next()).isEqualTo(Wakeup.of(Wakeup.ALL));
  }
}
