package io.latchkey.spi;

import io.latchkey.Feature;
import io.latchkey.LockMode;
import io.latchkey.UnsupportedFeatureException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Lock records: per name, a set of holders (owner → holds per mode, lease, fencing token), a
 * fencing counter that only grows, and a wait queue (owner → requested mode and deadline, in
 * arrival order). See {@link LockRequest} for the grant and queue rules. The operator's operations
 * (inspect, list, force-release, evict) are in {@link AdminStore}.
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
   * Removes one hold of the grant in {@code mode}, if the owner's record carries the grant's
   * fencing token (any token for {@link GrantRef#ANY_TOKEN}). When the lock becomes acquirable for
   * others (no exclusive holder is left, or no holder at all after a shared release), publishes a
   * wake-up aimed at the head of the wait queue ({@link Wakeup#forOwner}); with an empty queue
   * nobody waits and nothing is published.
   *
   * @param grant the lock owner and the token of its grant
   * @param mode the mode of the hold to release
   * @return whether the grant was held (a record with another token is not, and is left alone), and
   *     the holds left
   */
  CompletionStage<ReleaseResult> release(GrantRef grant, LockMode mode);

  /**
   * Whether {@link #releaseAndHandOver} can grant the releasing client's next waiter in the same
   * atomic step. When false (the default), the engine never calls it.
   *
   * @return true if this store hands a released lock over to a named waiter
   */
  default boolean handsOver() {
    return false;
  }

  /**
   * {@link #release} and, in the same atomic step, the lock's next grant to a waiter of the
   * releasing client: if the release makes the lock acquirable for others and either {@code next}'s
   * owner is the live head of the wait queue or no live waiter is queued at all, the backend
   * applies {@code next} as an acquire attempt by that owner (which counts as the owner having come
   * for its wake-up, so no wake-up is published for it) and answers that attempt too. Otherwise the
   * release wakes the queue head as {@link #release} does, and {@code next} is not attempted. A
   * contended lock thus changes hands in one call, with no wake-up message and no second round trip
   * on the way.
   *
   * <p>{@code next} may be queued (it was refused before and keeps a place) or not: a waiter that
   * saw the lock held by another owner of its own client waits in its client without asking the
   * backend (ADR 0003, "Waiting behind a holder of the same client"), and is handed the lock only
   * when nobody is queued on the backend; a waiter of another client that queued meanwhile is
   * served first.
   *
   * <p>The default releases and attempts nothing; stores that override it say so with {@link
   * #handsOver}. Applied at most once, like every operation.
   *
   * @param grant the lock owner and the token of its grant
   * @param mode the mode of the hold to release
   * @param next the attempt of a waiter of the releasing client, another owner on the same lock,
   *     queued or not
   * @return the release's answer and, if {@code next} was attempted, that attempt's answer
   */
  default CompletionStage<HandOverResult> releaseAndHandOver(
      GrantRef grant, LockMode mode, LockRequest next) {
    return release(grant, mode).thenApply(released -> new HandOverResult(released, null));
  }

  /**
   * Removes the owner from the wait queue (a waiter that gives up), waking the next one if the
   * owner was at the head and the lock has no exclusive holder. Does nothing if it is not queued. A
   * writer that leaves no longer holds back the readers behind it.
   *
   * @param name the lock name
   * @param owner the owner id
   * @return completes when done
   */
  CompletionStage<Void> leaveQueue(String name, String owner);

  /**
   * Asks every live holder of the lock (in every mode) to give it up: one atomic step that reads
   * the holders and sends each holder's client a {@link GrantRef} of its grant (owner and fencing
   * token), which that client's {@link LatchkeyBackend#subscribeRevocations} listener receives.
   * Nothing is released; a client that has no such grant any more ignores the request. Needs {@link
   * Feature#REVOCATION}; without it the stage fails with {@link UnsupportedFeatureException}.
   *
   * @param name the lock name
   * @return how many holders were asked: 0 if nobody holds the lock
   */
  default CompletionStage<Integer> requestRevocation(String name) {
    return CompletableFuture.failedFuture(
        new UnsupportedFeatureException(Feature.REVOCATION, "of this lock store"));
  }
}
