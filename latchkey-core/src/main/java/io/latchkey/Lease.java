package io.latchkey;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * One grant of a lock or permit: closing it undoes exactly that grant. A lease can be released from
 * any thread; it remembers its owner.
 *
 * <p>A lease is either renewed by the client's watchdog (when no lease time was given) or runs for
 * the lease time the caller chose. When the backend says the lease is gone, or renewal keeps
 * failing until the lease ran out, the lease turns invalid, the {@linkplain #onLost listeners}
 * fire, and {@link #release()} throws {@link LeaseLostException}: nobody keeps working silently on
 * a lock they lost.
 */
public interface Lease extends AutoCloseable {
  /**
   * @return the name of the lock or semaphore this lease belongs to
   */
  String name();

  /**
   * @return the holder id: the owner of a lock, or the id of a leased-semaphore permit
   */
  String holderId();

  /**
   * A number that grows with every grant of this name: a protected resource that remembers the
   * highest token it has seen and refuses lower ones cannot be written by an owner whose lease has
   * run out. Re-entries by the same owner carry the token of the grant they joined.
   *
   * @return the fencing token
   */
  long fencingToken();

  /**
   * @return true while the lease is held as far as this client knows: not released, not lost, and
   *     (for an explicit lease time) not yet run out. A watchdog lease learns of a force-release or
   *     eviction at its next renewal; an explicit lease, which is never renewed, only when it is
   *     released
   */
  boolean isValid();

  /**
   * @return the time left before the lease runs out unless renewed, as this client estimates it
   *     (zero once invalid)
   */
  Duration remaining();

  /**
   * Undoes this grant. Releasing twice is an error.
   *
   * @throws LeaseLostException if the lease was lost before it was released
   * @throws IllegalStateException if this lease was already released
   * @throws BackendUnavailableException if the backend could not be told; the lease then runs out
   *     on its own
   */
  void release();

  /**
   * Asynchronous {@link #release()}.
   *
   * @return completes when the backend has released the grant, or exceptionally as {@link
   *     #release()} would throw
   */
  CompletionStage<Void> releaseAsync();

  /** Same as {@link #release()}, for try-with-resources. */
  @Override
  void close();

  /**
   * Registers a listener called once if this lease is lost (never on a normal release). If the
   * lease is already lost the listener is called at once. Listeners run on the client's {@linkplain
   * LatchkeyOptions#callbackExecutor() callback executor}, so they may block.
   *
   * @param listener receives the reason
   */
  void onLost(Consumer<LeaseLostException> listener);

  /**
   * Registers a listener for suspension, resumption and loss of this lease (see {@link
   * LeaseListener}). If the lease is already lost, {@link LeaseListener#lost} is called at once.
   *
   * @param listener the listener
   */
  void addListener(LeaseListener listener);

  /**
   * Registers a handler for cooperative revocation: when another client (or an operator, with
   * {@code latchkey revoke NAME}) asks the holders of this lease's lock to give it up ({@link
   * DistributedLock#requestRevocation()}), the handler is called with this lease, typically to
   * finish the work at hand and {@linkplain #release() release} it. Nothing is taken away: a holder
   * whose handler ignores the request keeps the lock.
   *
   * <p>Handlers run on the client's {@linkplain LatchkeyOptions#callbackExecutor() callback
   * executor}, never on latchkey's own threads nor a client library's network thread. A handler is
   * called once per request that reaches this lease while it is held; if a request reached it
   * before the handler was registered, the handler is called at once. After this method returns, no
   * request sent later is missed (unless the backend's connection drops meanwhile). Only lock
   * leases (locks, fair locks, mutexes, either side of a read-write lock) can be asked for.
   *
   * @param handler receives this lease
   * @throws UnsupportedFeatureException if the backend lacks {@link Feature#REVOCATION}
   * @throws UnsupportedOperationException for a permit of a leased semaphore
   * @throws BackendUnavailableException if the client could not start listening for requests
   */
  void onRevocationRequested(Consumer<? super Lease> handler);

  /**
   * @return true once a revocation request has reached this lease (see {@link
   *     #onRevocationRequested}), for holders that prefer to check between steps of their work
   */
  boolean isRevocationRequested();
}
