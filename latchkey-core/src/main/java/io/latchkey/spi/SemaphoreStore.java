package io.latchkey.spi;

import java.util.concurrent.CompletionStage;

/** Counting semaphores without owners: per name, a number of available permits. */
public interface SemaphoreStore {
  /**
   * @param name the semaphore name
   * @param permits the initial number
   * @return true if the semaphore was not set and now is
   */
  CompletionStage<Boolean> trySetPermits(String name, int permits);

  /**
   * Changes the available permits by {@code delta} (creating the semaphore if needed); wakes
   * waiters when positive.
   *
   * @param name the semaphore name
   * @param delta the change
   * @return completes when done, or fails with {@link IllegalArgumentException} (nothing changed)
   *     if the result would leave the range of an {@code int}; the check and the change are one
   *     atomic step
   */
  CompletionStage<Void> addPermits(String name, int delta);

  /**
   * @param name the semaphore name
   * @param permits how many to take
   * @return true if they were available and are now taken
   */
  CompletionStage<Boolean> tryAcquire(String name, int permits);

  /**
   * @param name the semaphore name
   * @return the available permits
   */
  CompletionStage<Integer> availablePermits(String name);
}
