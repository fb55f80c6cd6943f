package io.latchkey.spi;

import io.latchkey.Feature;
import io.latchkey.UnsupportedFeatureException;
import java.util.Collection;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * One client's connection to a lock service.
 *
 * <p>The contract every backend keeps:
 *
 * <ul>
 *   <li><b>Atomic, at most once.</b> Every operation is one atomic step on the backend (one script,
 *       one statement or short transaction, one ZooKeeper operation or multi-op) and is applied at
 *       most once: never re-sent after a reconnect, never retried blindly. A call the engine gave
 *       up on (its timeout passed) must not be sent later; if it was sent, its answer still
 *       completes the stage, so that the engine can undo what it proves was granted.
 *   <li><b>Asynchronous.</b> Every method returns at once with a stage; the engine bounds how long
 *       it waits. A backend on a synchronous client library runs its calls on {@link
 *       BackendContext#blockingExecutor()}.
 *   <li><b>Refusals are latchkey's exceptions.</b> A stage fails with {@link
 *       IllegalArgumentException} for input the backend cannot take (a count past its range), with
 *       {@link io.latchkey.UnsupportedFeatureException} for an undeclared feature; any other
 *       failure means the outcome is unknown (the engine treats it as "may have happened").
 *   <li><b>The backend's clock.</b> Expiry is judged by the backend's clock, never by comparing
 *       client clocks.
 *   <li><b>Grants, not owners.</b> Renewal and release name a grant by owner and fencing token
 *       ({@link GrantRef}); a record with another token is another grant.
 * </ul>
 *
 * <p>The stores for optional features are only asked for when {@link #features()} declares them.
 */
public interface LatchkeyBackend extends AutoCloseable {
  /**
   * @return a description for messages and logs, without secrets (e.g. {@code redis://host:6379})
   */
  String description();

  /**
   * A stable name of the lock service this backend talks to, the same however its URI was spelled
   * (host names resolved, default ports and options dropped), so that two clients of one service
   * agree on it: a multi-lock takes its members in the order of (identity, name) to avoid deadlocks
   * between clients.
   *
   * @return the identity of the lock service
   */
  default String identity() {
    return description();
  }

  /**
   * @return the optional features this backend has
   */
  Set<Feature> features();

  /**
   * Why a feature is missing, when the caller can do something about it: the engine adds it to the
   * {@link UnsupportedFeatureException} it throws, e.g. the server setting that turns the feature
   * on.
   *
   * @param feature a feature this backend does not declare
   * @return the reason, a short clause, or empty if there is nothing to tell (the default)
   */
  default Optional<String> missingFeatureReason(Feature feature) {
    return Optional.empty();
  }

  /**
   * @return the lock records
   */
  LockStore locks();

  /**
   * @return the semaphores, if {@link Feature#SEMAPHORE} is declared
   */
  SemaphoreStore semaphores();

  /**
   * @return the leased semaphores, if {@link Feature#LEASED_SEMAPHORE} is declared
   */
  LeasedSemaphoreStore leasedSemaphores();

  /**
   * @return the count-down latches, if {@link Feature#COUNT_DOWN_LATCH} is declared
   */
  LatchStore latches();

  /**
   * @return the operator's operations, if {@link Feature#ADMIN} is declared
   */
  AdminStore admin();

  /**
   * @return the growing numbers a quorum of independent backends builds its fencing on, if this
   *     backend keeps them (by default it does not)
   */
  default Optional<FenceStore> fences() {
    return Optional.empty();
  }

  /**
   * @return the wake-up channel; {@link WakeupBus#NONE} without {@link Feature#WAKEUP_PUSH}
   */
  WakeupBus wakeups();

  /**
   * Which grants may be renewed in one call: the engine sends each {@link #renew} call with the
   * grants of one shard only, and each call on its own, so that a shard that does not answer (a
   * Redis Cluster master that stalls) delays the renewal of no other grant.
   *
   * @param grant a grant to renew
   * @return its shard, e.g. a Redis Cluster hash slot; the same value for grants that one call may
   *     renew together (by default every grant: one shard)
   */
  default String renewalShard(GrantRef grant) {
    return "";
  }

  /**
   * Extends the leases of many grants at once, each to at least {@code leaseMillis} from now by the
   * backend's clock, if the holder's record still carries the grant's fencing token ({@link
   * GrantRef#ANY_TOKEN} matches no record here: it is for a foreign release only). Never shortens a
   * lease, so a call with a tiny lease only confirms grants (the engine does that after {@link
   * GrantEvents#allResumed()}). The watchdog calls this once per batch per period, so a backend
   * should make it one round trip (or one per shard); a shard that fails fails only its grants
   * ({@link RenewResult#failed()}).
   *
   * @param grants lock grants and leased permits to renew
   * @param leaseMillis the new lease, from now by the backend's clock
   * @return which grants are gone or could not be renewed
   */
  CompletionStage<RenewResult> renew(Collection<GrantRef> grants, long leaseMillis);

  /**
   * Starts delivering the revocation requests aimed at this client's grants ({@link
   * LockStore#requestRevocation}) to {@code listener}: each request names the grant (lock name,
   * owner, fencing token) a holder of this client has, or had when the request was sent. The engine
   * subscribes once per client. The stage completes once the subscription is active, so that a
   * request sent after that moment is not missed; a request sent while the backend's connection is
   * down may be lost. Needs {@link Feature#REVOCATION}; without it the stage fails with {@link
   * UnsupportedFeatureException}.
   *
   * @param listener receives the requests; must not block (the engine hands them to the user's
   *     callback executor)
   * @return the active subscription
   */
  default CompletionStage<WakeupBus.Subscription> subscribeRevocations(
      Consumer<GrantRef> listener) {
    return CompletableFuture.failedFuture(
        new UnsupportedFeatureException(Feature.REVOCATION, description()));
  }

  /** Closes connections; held records stay on the server until released or expired. */
  @Override
  void close();
}
