package io.latchkey.spi;

import java.util.concurrent.CompletionStage;

/**
 * Semaphores whose permits have ids and leases: per name, a total of permits and the set of granted
 * permit ids with their lease deadlines (by the backend's clock). Expired permits are free. Renewal
 * goes through {@link LatchkeyBackend#renew}.
 */
public interface LeasedSemaphoreStore {
  /**
   * @param name the semaphore name
   * @param permits the total number of permits
   * @return true if the semaphore was not set and now is
   */
  CompletionStage<Boolean> trySetPermits(String name, int permits);

  /**
   * Changes the total by {@code delta}; wakes waiters when positive.
   *
   * @param name the semaphore name
   * @param delta the change
   * @return completes when done, or fails with {@link IllegalArgumentException} (nothing changed)
   *     if the result would leave the range of an {@code int}; the check and the change are one
   *     atomic step
   */
  CompletionStage<Void> addPermits(String name, int delta);

  /**
   * Grants the permit {@code permitId} if a permit is free.
   *
   * @param name the semaphore name
   * @param permitId a new random id chosen by the engine
   * @param leaseMillis the permit's lease
   * @return granted (with a fencing token), or busy with the time until the earliest lease ends
   */
  CompletionStage<AcquireResult> tryAcquire(String name, String permitId, long leaseMillis);

  /**
   * Frees a permit and wakes one waiter. Permit ids are chosen at random by the engine for each
   * acquisition, so the id alone names one grant.
   *
   * @param name the semaphore name
   * @param permitId the permit
   * @return true if it was held (not expired, not released before)
   */
  CompletionStage<Boolean> release(String name, String permitId);

  /**
   * @param name the semaphore name
   * @return the free permits (total minus unexpired granted ones, at least zero)
   */
  CompletionStage<Integer> availablePermits(String name);
}
