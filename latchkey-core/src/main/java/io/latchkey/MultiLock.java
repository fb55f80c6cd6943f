package io.latchkey;

import io.latchkey.internal.MultiLockHandle;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Holds several locks, possibly of different clients and backends, all or none (Redisson's
 * multi-lock, Curator's multi-lock).
 *
 * <p>Members are always acquired in one global order (by backend, then name), whatever order they
 * were given in, so two multi-locks that share members cannot deadlock: whoever takes the first
 * shared member first gets them all. If a member cannot be had within the wait, the members already
 * taken are released before the failure is reported. Each member follows its own owner rules (a
 * thread-owned member belongs to the calling thread).
 */
public interface MultiLock {
  /**
   * @param locks the members, at least one, no lock twice
   * @return the multi-lock
   * @throws IllegalArgumentException if empty, if a lock appears twice, or if a member was not made
   *     by latchkey
   */
  static MultiLock of(DistributedLock... locks) {
    return MultiLockHandle.of(locks);
  }

  /**
   * @return the members, in acquisition order
   */
  List<DistributedLock> members();

  /**
   * Waits at most {@code wait} in all for every member; the watchdog keeps them alive.
   *
   * @param wait the total wait
   * @return the grant
   * @throws LockTimeoutException if some member was not acquired in time (none is held then)
   * @throws InterruptedException if interrupted (none is held then)
   */
  MultiLease acquire(Duration wait) throws InterruptedException;

  /**
   * Waits at most {@code wait} in all for every member, each held at most {@code leaseTime}.
   *
   * @param wait the total wait
   * @param leaseTime the members' lease, or null for the watchdog
   * @return the grant
   * @throws LockTimeoutException if some member was not acquired in time (none is held then)
   * @throws InterruptedException if interrupted (none is held then)
   */
  MultiLease acquire(Duration wait, @Nullable Duration leaseTime) throws InterruptedException;

  /**
   * Takes every member if all are free now.
   *
   * @return the grant, or empty (nothing held)
   */
  Optional<MultiLease> tryAcquire();

  /**
   * Asynchronous {@link #acquire(Duration)}: members are requested one after another in the global
   * order; the owner of thread-owned members is the calling thread. Cancelling the returned future
   * abandons the wait and releases the members taken so far.
   *
   * @param wait the total wait
   * @return the grant, or fails with {@link LockTimeoutException} (nothing held)
   */
  CompletionStage<MultiLease> acquireAsync(Duration wait);

  /**
   * Asynchronous {@link #acquire(Duration, Duration)}.
   *
   * @param wait the total wait
   * @param leaseTime the members' lease, or null for the watchdog
   * @return the grant, or fails with {@link LockTimeoutException} (nothing held)
   */
  CompletionStage<MultiLease> acquireAsync(Duration wait, @Nullable Duration leaseTime);
}
