package io.latchkey;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * A distributed counting semaphore (like {@link java.util.concurrent.Semaphore}): permits have no
 * owner and no lease, any client may release, and a permit taken by a process that crashes is not
 * returned. Use {@link LeasedSemaphore} when holders can die.
 *
 * <p>A semaphore that was never set has no permits; {@link #trySetPermits(int)} sets the initial
 * number once.
 */
public interface DistributedSemaphore {
  /**
   * @return the semaphore name
   */
  String name();

  /**
   * Sets the number of permits if the semaphore has not been set yet.
   *
   * @param permits the initial number, zero or more
   * @return true if this call set it
   */
  boolean trySetPermits(int permits);

  /**
   * Adds (or, when negative, removes) permits unconditionally.
   *
   * @param delta a non-zero change
   * @throws IllegalArgumentException if {@code delta} is zero, or would take the count past {@link
   *     Integer#MAX_VALUE} or below {@link Integer#MIN_VALUE} (the count is then left as it was)
   */
  void addPermits(int delta);

  /**
   * @return the permits available now; negative after {@link #addPermits(int)} took away more than
   *     were free
   */
  int availablePermits();

  /**
   * Takes permits if they are available now.
   *
   * @param permits how many, at least one
   * @return true if taken
   */
  boolean tryAcquire(int permits);

  /**
   * Waits at most {@code wait} for the permits.
   *
   * @param permits how many, at least one
   * @param wait how long to wait
   * @return true if taken
   * @throws InterruptedException if interrupted while waiting (nothing is taken)
   */
  boolean tryAcquire(int permits, Duration wait) throws InterruptedException;

  /**
   * Waits at most {@code wait} for the permits.
   *
   * @param permits how many, at least one
   * @param wait how long to wait
   * @throws LockTimeoutException if not taken in time
   * @throws InterruptedException if interrupted while waiting (nothing is taken)
   */
  void acquire(int permits, Duration wait) throws InterruptedException;

  /**
   * Asynchronous {@link #acquire(int, Duration)}.
   *
   * @param permits how many
   * @param wait how long to wait
   * @return completes when taken, or fails with {@link LockTimeoutException}
   */
  CompletionStage<Void> acquireAsync(int permits, Duration wait);

  /**
   * Returns permits and wakes as many waiters as they can serve.
   *
   * @param permits how many, at least one
   * @throws IllegalArgumentException if {@code permits} is not positive, or would take the count
   *     past {@link Integer#MAX_VALUE} (the count is then left as it was)
   */
  void release(int permits);

  /**
   * Asynchronous {@link #release(int)}.
   *
   * @param permits how many
   * @return completes when released
   */
  CompletionStage<Void> releaseAsync(int permits);
}
