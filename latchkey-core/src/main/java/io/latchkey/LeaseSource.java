package io.latchkey;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * Something that hands out {@link Lease}s: a lock, a mutex, a leased semaphore. The acquire forms
 * are the same for all of them.
 *
 * <p>Without a lease time, the client's watchdog keeps the lease alive until it is released (or
 * lost); with one, the grant runs out after that time by the backend's clock, without renewal
 * (backends whose holds live on a session or connection refuse it: see {@link Feature#LEASE_TIME}
 * and {@link Feature#PERMIT_LEASE_TIME}). A lease is only ever handed out valid: a grant whose
 * answer came back after its lease ran out is given back and the wait goes on. Every form fails
 * with {@link BackendUnavailableException} (or {@link BackendTimeoutException}) when the backend
 * does not answer within the operation timeout, never hanging.
 */
public interface LeaseSource {
  /**
   * @return the name of the lock or semaphore
   */
  String name();

  /**
   * Waits at most {@code wait}; the watchdog keeps the lease alive until released.
   *
   * @param wait how long to wait; zero tries once
   * @return the lease, to release or close
   * @throws LockTimeoutException if nothing was granted in time
   * @throws InterruptedException if the thread was interrupted while waiting (nothing is held)
   */
  Lease acquire(Duration wait) throws InterruptedException;

  /**
   * Waits at most {@code wait}; the grant is held for at most {@code leaseTime} unless released
   * earlier (no watchdog).
   *
   * @param wait how long to wait; zero tries once
   * @param leaseTime how long the grant is held at most
   * @return the lease, to release or close
   * @throws LockTimeoutException if nothing was granted in time
   * @throws InterruptedException if the thread was interrupted while waiting (nothing is held)
   * @throws UnsupportedFeatureException if the backend cannot expire grants by itself ({@link
   *     Feature#LEASE_TIME}; for a leased semaphore's permits {@link Feature#PERMIT_LEASE_TIME})
   */
  Lease acquire(Duration wait, Duration leaseTime) throws InterruptedException;

  /**
   * Asynchronous {@link #acquire(Duration)}. If the stage completes later, it completes on the
   * client's {@linkplain LatchkeyOptions#callbackExecutor() callback executor}, so a dependent
   * stage may block. Cancelling it cancels the wait; a grant that races with the cancellation is
   * given back.
   *
   * @param wait how long to wait
   * @return the lease, or fails with {@link LockTimeoutException}
   */
  CompletionStage<Lease> acquireAsync(Duration wait);

  /**
   * Asynchronous {@link #acquire(Duration, Duration)}, completing as {@link
   * #acquireAsync(Duration)} does.
   *
   * @param wait how long to wait
   * @param leaseTime how long the grant is held at most
   * @return the lease, or fails with {@link LockTimeoutException}
   */
  CompletionStage<Lease> acquireAsync(Duration wait, Duration leaseTime);
}
