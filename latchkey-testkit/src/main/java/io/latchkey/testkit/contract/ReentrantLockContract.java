package io.latchkey.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockTimeoutException;
import io.latchkey.testkit.ContractSupport;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Conformance: mutual exclusion, reentrancy and hold counts, owner-only unlock, the Lock methods.
 *
 * <p>A second client stands for another process; another thread of the same client is another
 * owner, as with {@link java.util.concurrent.locks.ReentrantLock}.
 *
 * <ul>
 *   <li>{@code excludesAnotherClientUntilReleased}: while one client holds the lock, another cannot
 *       take it; after the unlock it can.
 *   <li>{@code tryFailsAtOnceWhenHeldElsewhere}: every non-waiting form refuses while another owner
 *       holds the lock, without waiting for it to be released.
 *   <li>{@code reentersAndCountsHolds}: the owner re-enters through every acquire form and each
 *       acquire adds one hold.
 *   <li>{@code eachUnlockUndoesOneAcquire}: the lock stays held until the last hold is undone,
 *       whether by unlock or by releasing a lease.
 *   <li>{@code reportsWhetherLockedAndByWhom}: isLocked sees any owner; isHeldByCurrentOwner and
 *       holdCount see only the calling owner.
 *   <li>{@code anotherThreadCannotUnlock}: unlock from a thread that holds nothing fails with
 *       IllegalMonitorStateException and the lock stays held.
 *   <li>{@code anotherClientCannotUnlock}: likewise from another client.
 *   <li>{@code unlockOfAFreeLockFails}: unlock of a lock nobody took fails with
 *       IllegalMonitorStateException.
 *   <li>{@code anotherThreadOfTheSameClientIsExcluded}: locks are thread-owned, so a second thread
 *       of the holding client waits like any other owner.
 *   <li>{@code conditionsAreRefused}: newCondition throws UnsupportedOperationException.
 *   <li>{@code leaseWorksWithTryWithResources}: a lease is valid inside the block, released after
 *       it, and cannot be released twice.
 *   <li>{@code leaseCanBeReleasedByAnotherThread}: a lease remembers its owner, so any thread may
 *       release it.
 * </ul>
 */
public abstract class ReentrantLockContract extends ContractSupport {

  @Test
  void excludesAnotherClientUntilReleased() {
    String name = uniqueName("reentrant");
    DistributedLock mine = client().lock(name);
    DistributedLock theirs = newClient().lock(name);

    mine.lock();
    assertThat(theirs.tryLock()).isFalse();
    assertThat(theirs.isLocked()).isTrue();

    mine.unlock();
    assertThat(theirs.tryLock()).isTrue();
    assertThat(mine.tryLock()).isFalse();
    theirs.unlock();
    assertThat(mine.isLocked()).isFalse();
  }

  @Test
  void tryFailsAtOnceWhenHeldElsewhere() throws InterruptedException {
    String name = uniqueName("reentrant");
    client().lock(name).lock();
    DistributedLock theirs = newClient().lock(name);

    assertThat(theirs.tryLock()).isFalse();
    assertThat(theirs.tryAcquire()).isEmpty();
    assertThat(theirs.tryLock(Duration.ZERO)).isFalse();
    assertThat(theirs.tryLock(0, TimeUnit.SECONDS)).isFalse();
    assertThatThrownBy(() -> theirs.acquire(Duration.ZERO))
        .isInstanceOf(LockTimeoutException.class);
    assertThat(theirs.holdCount()).isZero();
    assertThat(theirs.isHeldByCurrentOwner()).isFalse();
  }

  @Test
  void reentersAndCountsHolds() throws InterruptedException {
    DistributedLock lock = client().lock(uniqueName("reentrant"));
    assertThat(lock.holdCount()).isZero();

    lock.lock();
    assertThat(lock.holdCount()).isEqualTo(1);
    assertThat(lock.tryLock()).isTrue();
    assertThat(lock.tryLock(Duration.ofMillis(100))).isTrue();
    assertThat(lock.tryLock(100, TimeUnit.MILLISECONDS)).isTrue();
    lock.lockInterruptibly();
    Lease lease = lock.acquire(Duration.ZERO);
    assertThat(lock.tryAcquire()).isPresent();
    assertThat(lock.holdCount()).isEqualTo(7);
    assertThat(lease.isValid()).isTrue();

    for (int left = 6; left >= 0; left--) {
      lock.unlock();
      assertThat(lock.holdCount()).isEqualTo(left);
    }
    assertThat(lock.isLocked()).isFalse();
  }

  @Test
  void eachUnlockUndoesOneAcquire() throws InterruptedException {
    String name = uniqueName("reentrant");
    DistributedLock lock = client().lock(name);
    DistributedLock theirs = newClient().lock(name);

    Lease first = lock.acquire(Duration.ZERO);
    lock.lock();
    Lease third = lock.acquire(Duration.ZERO);
    assertThat(lock.holdCount()).isEqualTo(3);

    first.release();
    assertThat(lock.holdCount()).isEqualTo(2);
    assertThat(theirs.tryLock()).isFalse();

    lock.unlock();
    assertThat(lock.holdCount()).isEqualTo(1);
    assertThat(theirs.tryLock()).isFalse();
    assertThat(third.isValid()).isTrue();

    third.release();
    assertThat(lock.holdCount()).isZero();
    assertThat(lock.isHeldByCurrentOwner()).isFalse();
    assertThat(theirs.tryLock()).isTrue();
    theirs.unlock();
  }

  @Test
  void reportsWhetherLockedAndByWhom() throws Exception {
    String name = uniqueName("reentrant");
    DistributedLock lock = client().lock(name);
    DistributedLock theirs = newClient().lock(name);
    assertThat(lock.isLocked()).isFalse();
    assertThat(lock.isHeldByCurrentOwner()).isFalse();

    lock.lock();
    assertThat(lock.isLocked()).isTrue();
    assertThat(lock.isHeldByCurrentOwner()).isTrue();
    assertThat(theirs.isLocked()).isTrue();
    assertThat(theirs.isHeldByCurrentOwner()).isFalse();
    assertThat(theirs.holdCount()).isZero();
    assertThat(
            BackgroundCall.run(
                executor(1),
                () -> lock.isLocked() && !lock.isHeldByCurrentOwner() && lock.holdCount() == 0))
        .as("another thread of the holding client sees the lock held, but not by itself")
        .isTrue();

    lock.unlock();
    assertThat(lock.isLocked()).isFalse();
    assertThat(lock.isHeldByCurrentOwner()).isFalse();
    assertThat(theirs.isLocked()).isFalse();
  }

  @Test
  void anotherThreadCannotUnlock() throws Exception {
    String name = uniqueName("reentrant");
    DistributedLock lock = client().lock(name);
    lock.lock();

    Throwable refused = BackgroundCall.run(executor(1), () -> catchThrowable(lock::unlock));

    assertThat(refused).isInstanceOf(IllegalMonitorStateException.class);
    assertThat(lock.isHeldByCurrentOwner()).isTrue();
    assertThat(lock.holdCount()).isEqualTo(1);
    assertThat(newClient().lock(name).tryLock()).isFalse();
    lock.unlock();
    assertThat(lock.isLocked()).isFalse();
  }

  @Test
  void anotherClientCannotUnlock() {
    String name = uniqueName("reentrant");
    DistributedLock lock = client().lock(name);
    DistributedLock theirs = newClient().lock(name);
    lock.lock();

    assertThatThrownBy(theirs::unlock).isInstanceOf(IllegalMonitorStateException.class);

    assertThat(lock.isHeldByCurrentOwner()).isTrue();
    assertThat(theirs.isLocked()).isTrue();
    assertThat(theirs.tryLock()).isFalse();
    lock.unlock();
    assertThat(theirs.isLocked()).isFalse();
  }

  @Test
  void unlockOfAFreeLockFails() {
    String name = uniqueName("reentrant");

    assertThatThrownBy(() -> client().lock(name).unlock())
        .isInstanceOf(IllegalMonitorStateException.class)
        .hasMessageContaining(name);
    assertThatThrownBy(() -> newClient().lock(name).unlock())
        .isInstanceOf(IllegalMonitorStateException.class);
    assertThat(client().lock(name).isLocked()).isFalse();
  }

  @Test
  void anotherThreadOfTheSameClientIsExcluded() throws Exception {
    String name = uniqueName("reentrant");
    DistributedLock lock = client().lock(name);
    ExecutorService otherThread = executor(1);
    lock.lock();

    assertThat(BackgroundCall.run(otherThread, () -> lock.tryLock())).isFalse();
    assertThat(BackgroundCall.run(otherThread, () -> lock.tryLock(Duration.ofMillis(100))))
        .isFalse();
    assertThat(BackgroundCall.run(otherThread, () -> lock.tryAcquire().isPresent())).isFalse();

    lock.unlock();
    assertThat(BackgroundCall.run(otherThread, () -> lock.tryLock())).isTrue();
    assertThat(lock.tryLock()).as("now the other thread holds it").isFalse();
    BackgroundCall.run(
        otherThread,
        () -> {
          lock.unlock();
          return null;
        });
    assertThat(lock.isLocked()).isFalse();
  }

  @Test
  void conditionsAreRefused() {
    DistributedLock lock = client().lock(uniqueName("reentrant"));

    assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void leaseWorksWithTryWithResources() throws InterruptedException {
    String name = uniqueName("reentrant");
    DistributedLock lock = client().lock(name);
    DistributedLock theirs = newClient().lock(name);
    Lease seen;

    try (Lease lease = lock.acquire(Duration.ofSeconds(1))) {
      seen = lease;
      assertThat(lease.name()).isEqualTo(name);
      assertThat(lease.holderId()).isNotBlank();
      assertThat(lease.isValid()).isTrue();
      assertThat(lease.remaining()).isPositive();
      assertThat(lock.isHeldByCurrentOwner()).isTrue();
      assertThat(theirs.tryLock()).isFalse();
    }

    assertThat(seen.isValid()).isFalse();
    assertThat(seen.remaining()).isZero();
    assertThat(lock.isHeldByCurrentOwner()).isFalse();
    assertThat(lock.isLocked()).isFalse();
    assertThatThrownBy(seen::release).isInstanceOf(IllegalStateException.class);
    assertThat(theirs.tryLock()).isTrue();
    theirs.unlock();
  }

  @Test
  void leaseCanBeReleasedByAnotherThread() throws Exception {
    String name = uniqueName("reentrant");
    DistributedLock lock = client().lock(name);
    Lease lease = lock.acquire(Duration.ZERO);

    BackgroundCall.run(
        executor(1),
        () -> {
          lease.release();
          return null;
        });

    assertThat(lock.holdCount()).isZero();
    assertThat(lock.isLocked()).isFalse();
    assertThat(newClient().lock(name).tryLock()).isTrue();
  }
}
