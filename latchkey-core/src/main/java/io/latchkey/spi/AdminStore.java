package io.latchkey.spi;

import io.latchkey.ClientInfo;
import io.latchkey.Feature;
import io.latchkey.LatchInfo;
import io.latchkey.LeasedSemaphoreInfo;
import io.latchkey.LockInfo;
import io.latchkey.SemaphoreInfo;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * The operator's operations on lock records, apart from the grant path: only asked for when the
 * backend declares {@link io.latchkey.Feature#ADMIN} (and, for {@link #clients()} and the presence
 * record, {@link io.latchkey.Feature#PRESENCE}).
 */
public interface AdminStore {
  /**
   * Removes every holder of the lock and wakes all waiters.
   *
   * @param name the lock name
   * @return true if anyone held it
   */
  CompletionStage<Boolean> forceRelease(String name);

  /**
   * Removes one holder entirely (all its holds, in every mode) and, if the lock becomes acquirable
   * for others, wakes the head of the wait queue.
   *
   * @param name the lock name
   * @param owner the owner id
   * @return true if that owner held the lock
   */
  CompletionStage<Boolean> evict(String name, String owner);

  /**
   * @param name the lock name
   * @return the holders and queue, or empty if nobody holds it
   */
  CompletionStage<Optional<LockInfo>> inspect(String name);

  /**
   * @return every held lock
   */
  CompletionStage<List<LockInfo>> list();

  /**
   * @return the clients whose presence records are alive; needs {@link
   *     io.latchkey.Feature#PRESENCE}
   */
  CompletionStage<List<ClientInfo>> clients();

  /**
   * Writes (or rewrites) this client's presence record so that it lives {@code timeToLiveMillis} by
   * the backend's clock. The engine calls it when the client opens and then periodically; needs
   * {@link io.latchkey.Feature#PRESENCE}.
   *
   * @param self this client's identity, host, pid and start time
   * @param timeToLiveMillis how long the record lives without another heartbeat
   * @return completes when written
   */
  CompletionStage<Void> heartbeat(ClientInfo self, long timeToLiveMillis);

  /**
   * Deletes this client's presence record; the engine calls it on close.
   *
   * @param clientId this client's id
   * @return completes when deleted
   */
  CompletionStage<Void> leave(String clientId);

  /**
   * Needs {@link Feature#SYNCHRONIZER_INSPECTION}.
   *
   * @param name a semaphore name
   * @return the semaphore, or empty if it has no record
   */
  default CompletionStage<Optional<SemaphoreInfo>> inspectSemaphore(String name) {
    return Refusals.refuse(Feature.SYNCHRONIZER_INSPECTION, this);
  }

  /**
   * Needs {@link Feature#SYNCHRONIZER_INSPECTION}.
   *
   * @param name a leased semaphore name
   * @return the total and the unexpired permits (in grant order), or empty if it has no record
   */
  default CompletionStage<Optional<LeasedSemaphoreInfo>> inspectLeasedSemaphore(String name) {
    return Refusals.refuse(Feature.SYNCHRONIZER_INSPECTION, this);
  }

  /**
   * Needs {@link Feature#SYNCHRONIZER_INSPECTION}.
   *
   * @param name a latch name
   * @return the latch, or empty if it is not counting down
   */
  default CompletionStage<Optional<LatchInfo>> inspectLatch(String name) {
    return Refusals.refuse(Feature.SYNCHRONIZER_INSPECTION, this);
  }

  /**
   * Needs {@link Feature#SYNCHRONIZER_INSPECTION}.
   *
   * @return every semaphore that has a record, by name
   */
  default CompletionStage<List<SemaphoreInfo>> listSemaphores() {
    return Refusals.refuse(Feature.SYNCHRONIZER_INSPECTION, this);
  }

  /**
   * Needs {@link Feature#SYNCHRONIZER_INSPECTION}.
   *
   * @return every leased semaphore that has a record, by name
   */
  default CompletionStage<List<LeasedSemaphoreInfo>> listLeasedSemaphores() {
    return Refusals.refuse(Feature.SYNCHRONIZER_INSPECTION, this);
  }

  /**
   * Needs {@link Feature#SYNCHRONIZER_INSPECTION}.
   *
   * @return every latch counting down, by name
   */
  default CompletionStage<List<LatchInfo>> listLatches() {
    return Refusals.refuse(Feature.SYNCHRONIZER_INSPECTION, this);
  }
}
