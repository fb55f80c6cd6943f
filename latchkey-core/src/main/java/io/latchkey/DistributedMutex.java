package io.latchkey;

import java.util.Optional;

/**
 * A non-reentrant distributed mutex (Curator's semaphore mutex): every acquire is a new owner, so a
 * second acquire waits even on the thread that holds the first, and the returned {@link Lease} may
 * be released from any thread.
 */
public interface DistributedMutex extends LeaseSource {

  /**
   * @return the lease, or empty if the mutex is held (by anyone, this thread included)
   */
  Optional<Lease> tryAcquire();

  /**
   * @return true if the mutex is held now (asks the backend)
   */
  boolean isLocked();

  /**
   * Releases the mutex whoever holds it (an administrator's tool).
   *
   * @return true if it was held
   */
  boolean forceUnlock();

  /**
   * Asks whoever holds this mutex to give it up; see {@link DistributedLock#requestRevocation()}.
   *
   * @return true if the mutex was held and its holder was asked; false if nobody holds it
   * @throws UnsupportedFeatureException if the backend lacks {@link Feature#REVOCATION}
   */
  boolean requestRevocation();
}
