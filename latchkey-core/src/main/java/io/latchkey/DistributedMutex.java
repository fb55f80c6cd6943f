package io.latchkey;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * A non-reentrant distributed mutex (Curator's semaphore mutex): every acquire is a new owner, so a
 * second acquire waits even on the thread that holds the first, and the returned {@link Lease} may
 * be released from any thread.
 */
public interface DistributedMutex {
  /**
   * @return the mutex name (shared with the lock of that name)
   */
  String name();

  /**
   * Waits at most {@code wait}; the watchdog keeps the lease alive until released.
   *
   * @param wait how long to wait; zero tries once
   * @return the lease
   * @throws LockTimeoutException if not acquired in time
   * @throws InterruptedException if interrupted while waiting (nothing is held)
   */
  Lease acquire(Duration wait) throws InterruptedException;

  /**
   * Waits at most {@code wait}; held for at most {@code leaseTime}.
   *
   * @param wait how long to wait; zero tries once
   * @param leaseTime how long the mutex is held at most
   * @return the lease
   * @throws LockTimeoutException if not acquired in time
   * @throws InterruptedException if interrupted while waiting (nothing is held)
   */
  Lease acquire(Duration wait, Duration leaseTime) throws InterruptedException;

  /**
   * @return the lease, or empty if the mutex is held (by anyone, this thread included)
   */
  Optional<Lease> tryAcquire();

  /**
   * Asynchronous {@link #acquire(Duration)}.
   *
   * @param wait how long to wait
   * @return the lease, or fails with {@link LockTimeoutException}
   */
  CompletionStage<Lease> acquireAsync(Duration wait);

  /**
   * Asynchronous {@link #acquire(Duration, Duration)}.
   *
   * @param wait how long to wait
   * @param leaseTime how long the mutex is held at most
   * @return the lease, or fails with {@link LockTimeoutException}
   */
  CompletionStage<Lease> acquireAsync(Duration wait, Duration leaseTime);

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
}
