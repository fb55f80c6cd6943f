package io.latchkey.spi;

import io.latchkey.Feature;
import java.util.concurrent.CompletionStage;

/**
 * Counting semaphores without owners: per name, a number of available permits. The record exists
 * from the first call that sets or changes the number until {@link #delete(String)}; a name without
 * a record has no permits.
 */
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

  /**
   * Sets the available permits (creating the record if needed); wakes waiters when positive. Needs
   * {@link Feature#DRAIN_AND_SET_PERMITS}.
   *
   * @param name the semaphore name
   * @param permits the new number, zero or more
   * @return completes when set
   */
  default CompletionStage<Void> setPermits(String name, int permits) {
    return Refusals.refuse(Feature.DRAIN_AND_SET_PERMITS, this);
  }

  /**
   * Takes every available permit in one atomic step. Needs {@link Feature#DRAIN_AND_SET_PERMITS}.
   *
   * @param name the semaphore name
   * @return how many were taken: the count if it was positive (it is now zero), else zero (the
   *     count is left as it was)
   */
  default CompletionStage<Integer> drainPermits(String name) {
    return Refusals.refuse(Feature.DRAIN_AND_SET_PERMITS, this);
  }

  /**
   * {@link #addPermits(String, int)} with a positive {@code delta}, only if the record exists; one
   * atomic step. Needs {@link Feature#DELETE_RECORDS}.
   *
   * @param name the semaphore name
   * @param delta the permits to return, positive
   * @return true if added; false if there is no record (nothing changed); fails with {@link
   *     IllegalArgumentException} as {@code addPermits} does
   */
  default CompletionStage<Boolean> addPermitsIfExists(String name, int delta) {
    return Refusals.refuse(Feature.DELETE_RECORDS, this);
  }

  /**
   * Deletes the record. Needs {@link Feature#DELETE_RECORDS}.
   *
   * @param name the semaphore name
   * @return true if it existed
   */
  default CompletionStage<Boolean> delete(String name) {
    return Refusals.refuse(Feature.DELETE_RECORDS, this);
  }

  /**
   * Needs {@link Feature#DELETE_RECORDS}.
   *
   * @param name the semaphore name
   * @return true if the record exists
   */
  default CompletionStage<Boolean> exists(String name) {
    return Refusals.refuse(Feature.DELETE_RECORDS, this);
  }
}
