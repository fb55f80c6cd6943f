package io.latchkey;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * A distributed counting semaphore (like {@link java.util.concurrent.Semaphore}): permits have no
 * owner and no lease, any client may release, and a permit taken by a process that crashes is not
 * returned. Use {@link LeasedSemaphore} when holders can die.
 *
 * <p>A semaphore that was never set has no permits; {@link #trySetPermits(int)} sets the initial
 * number once, {@link #setPermits(int)} at any time. Its record exists from the first call that
 * sets or changes the count until {@link #delete()}.
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
   * Sets the number of available permits, whatever it was (permits taken and not yet released are
   * forgotten: their later release adds to the new number), and wakes as many waiters as the new
   * number can serve.
   *
   * @param permits the new number, zero or more
   * @throws UnsupportedFeatureException without {@link Feature#DRAIN_AND_SET_PERMITS}
   */
  void setPermits(int permits);

  /**
   * Takes every permit available now, in one atomic step.
   *
   * @return how many were taken; zero if none were available (the count was zero or negative, and
   *     is left as it was)
   * @throws UnsupportedFeatureException without {@link Feature#DRAIN_AND_SET_PERMITS}
   */
  int drainPermits();

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
   * Waits as long as it takes for the permits.
   *
   * @param permits how many, at least one
   * @throws InterruptedException if interrupted while waiting (nothing is taken)
   */
  void acquire(int permits) throws InterruptedException;

  /**
   * Asynchronous {@link #acquire(int)}: completes when the permits are taken; cancelling the stage
   * abandons the wait.
   *
   * @param permits how many
   * @return completes when taken
   */
  CompletionStage<Void> acquireAsync(int permits);

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

  /**
   * Returns permits only if the semaphore's record exists, in one atomic step: a release that comes
   * after {@link #delete()} (a late {@code finally}, a worker finishing after the clean-up) does
   * not bring the semaphore back with stray permits. Otherwise the same as {@link #release(int)}.
   *
   * @param permits how many, at least one
   * @return true if they were returned; false if the semaphore does not exist (nothing changed)
   * @throws IllegalArgumentException as {@link #release(int)}
   * @throws UnsupportedFeatureException without {@link Feature#DELETE_RECORDS}
   */
  boolean releaseIfExists(int permits);

  /**
   * Asynchronous {@link #releaseIfExists(int)}.
   *
   * @param permits how many
   * @return true if they were returned
   */
  CompletionStage<Boolean> releaseIfExistsAsync(int permits);

  /**
   * Deletes the semaphore's record: it then has no permits, as if it had never been set. Waiters go
   * on waiting (for permits added or set later).
   *
   * @return true if the record existed
   * @throws UnsupportedFeatureException without {@link Feature#DELETE_RECORDS}
   */
  boolean delete();

  /**
   * @return true if the semaphore's record exists: it was set or changed and not deleted since
   * @throws UnsupportedFeatureException without {@link Feature#DELETE_RECORDS}
   */
  boolean isExists();
}
