package io.latchkey.spi;

import io.latchkey.ClientInfo;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Lock records: per name, a set of holders (owner → holds per mode, lease, fencing token), a
 * fencing counter that only grows, and a wait queue (owner → deadline, in arrival order). See
 * {@link LockRequest} for the grant and queue rules.
 */
public interface LockStore {
  /**
   * One atomic acquire attempt.
   *
   * @param request the attempt
   * @return granted, busy (with a hint), or upgrade refused
   */
  CompletionStage<AcquireResult> tryAcquire(LockRequest request);

  /**
   * Removes one hold of {@code owner} in {@code mode}. When the lock becomes acquirable for others
   * (no exclusive holder is left, or no holder at all after a shared release), publishes a wake-up
   * aimed at the head of the wait queue ({@link Wakeup#forOwner}); with an empty queue nobody waits
   * and nothing is published.
   *
   * @param name the lock name
   * @param owner the owner id
   * @param mode the mode of the hold to release
   * @return whether the owner held it, and the holds left
   */
  CompletionStage<ReleaseResult> release(String name, String owner, LockMode mode);

  /**
   * Removes the owner from the wait queue (a waiter that gives up), waking the next one if the
   * owner was at the head and the lock has no exclusive holder. Does nothing if it is not queued.
   *
   * @param name the lock name
   * @param owner the owner id
   * @return completes when done
   */
  CompletionStage<Void> leaveQueue(String name, String owner);

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
   * @return every held lock; needs {@link io.latchkey.Feature#INSPECTION}
   */
  CompletionStage<List<LockInfo>> list();

  /**
   * @return the clients whose presence records are alive; needs {@link
   *     io.latchkey.Feature#INSPECTION}
   */
  CompletionStage<List<ClientInfo>> clients();
}
