package io.latchkey.spi;

import io.latchkey.Feature;
import java.util.List;
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
   * Grants the permit {@code permitId} if a permit is free, with an explicit lease that nobody
   * renews ({@link io.latchkey.Feature#PERMIT_LEASE_TIME}): the backend frees the permit by its own
   * clock once {@code leaseMillis} have passed since the grant, whether or not this client lives.
   * {@link #tryAcquire} is asked for permits that the watchdog renews. A backend whose every permit
   * expires by its clock need not tell the two apart: the default asks {@link #tryAcquire}.
   *
   * @param name the semaphore name
   * @param permitId a new random id chosen by the engine
   * @param leaseMillis the permit's lease
   * @return granted (with a fencing token), or busy with the time until the earliest lease ends
   */
  default CompletionStage<AcquireResult> tryAcquireWithLease(
      String name, String permitId, long leaseMillis) {
    return tryAcquire(name, permitId, leaseMillis);
  }

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
   * @return the free permits: the total minus the unexpired granted ones, negative when the total
   *     is below the number granted
   */
  CompletionStage<Integer> availablePermits(String name);

  /**
   * Grants all the permits {@code permitIds} if that many are free, else none, in one atomic step;
   * all share one fencing token. Asked again with the same ids (an attempt whose answer was lost),
   * it extends their leases and answers their token. Needs {@link Feature#PERMIT_BATCHES}.
   *
   * @param name the semaphore name
   * @param permitIds new random ids chosen by the engine, at least one, without repeats
   * @param leaseMillis the lease of each permit
   * @return granted (with the shared token and {@code holds} the number of permits), or busy with
   *     the time until the earliest lease ends
   */
  default CompletionStage<AcquireResult> tryAcquireAll(
      String name, List<String> permitIds, long leaseMillis) {
    return Refusals.refuse(Feature.PERMIT_BATCHES, this);
  }

  /**
   * Frees all the permits {@code permitIds} if every one is held, else none, in one atomic step;
   * wakes one waiter per freed permit. Needs {@link Feature#PERMIT_BATCHES}.
   *
   * @param name the semaphore name
   * @param permitIds the permits, at least one, without repeats
   * @return true if all were held and are now free; false if nothing changed
   */
  default CompletionStage<Boolean> releaseAll(String name, List<String> permitIds) {
    return Refusals.refuse(Feature.PERMIT_BATCHES, this);
  }

  /**
   * Sets a held permit's lease deadline to now plus {@code leaseMillis} by the backend's clock,
   * shorter or longer than before. Needs {@link Feature#PERMIT_LEASE_UPDATE}.
   *
   * @param name the semaphore name
   * @param permitId the permit
   * @param leaseMillis the new lease
   * @return true if the permit was held (not expired, not released)
   */
  default CompletionStage<Boolean> updateLease(String name, String permitId, long leaseMillis) {
    return Refusals.refuse(Feature.PERMIT_LEASE_UPDATE, this);
  }

  /**
   * Deletes the record: the total and every granted permit. The fencing tokens of later grants of
   * the name must still grow. Needs {@link Feature#DELETE_RECORDS}.
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
   * @return true if a total was set or changed and not deleted since
   */
  default CompletionStage<Boolean> exists(String name) {
    return Refusals.refuse(Feature.DELETE_RECORDS, this);
  }
}
