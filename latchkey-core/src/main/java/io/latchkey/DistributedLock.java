package io.latchkey;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A reentrant distributed lock: at most one owner holds it at a time, across every process that
 * uses the same backend and name. The owner is the calling thread of this client (a random 128-bit
 * client id plus the thread id) unless the lock was obtained with {@link #withOwner(OwnerToken)}.
 * Each acquire adds a hold; each unlock undoes one.
 *
 * <p>Two styles, which may be mixed:
 *
 * <ul>
 *   <li>the {@link Lock} methods, thread-owned as with {@link
 *       java.util.concurrent.locks.ReentrantLock}: {@code lock.lock(); try { … } finally {
 *       lock.unlock(); }};
 *   <li>{@link #acquire(Duration)} returning a {@link Lease} for try-with-resources, which carries
 *       the fencing token and can be released from any thread.
 * </ul>
 *
 * <p>Without a lease time the client's watchdog keeps the lease alive while it is held; with one,
 * the lease runs out after that time even if the owner did not unlock. A re-entry never shortens
 * the lease an outer acquire asked for.
 *
 * <p>The owner of an asynchronous acquire is fixed when the method is called, so the lease it
 * completes with belongs to the calling thread (or token) even though it completes elsewhere.
 *
 * <p>Re-entering without a lease time puts the hold under the watchdog even if the outer acquire
 * gave one: the lock is then held until released. When the owner holds only the read side of a
 * read-write lock, every acquire and lock form of the write side fails with {@link
 * LockUpgradeException}, and the try forms answer false (see {@link DistributedReadWriteLock}).
 *
 * <p>Lock names are shared between {@link Latchkey#lock}, {@link Latchkey#fairLock} and the write
 * side of {@link Latchkey#readWriteLock}: they are the same lock, differing in how waiters queue.
 */
public interface DistributedLock extends Lock, LeaseSource {

  /**
   * Tries once, without waiting.
   *
   * @return the lease, or empty if another owner holds the lock
   */
  Optional<Lease> tryAcquire();

  /**
   * Like {@link #lock()}, held for at most {@code leaseTime} (no watchdog).
   *
   * @param leaseTime how long the lock is held at most
   */
  void lock(Duration leaseTime);

  /**
   * Like {@link #tryLock(long, java.util.concurrent.TimeUnit)}.
   *
   * @param wait how long to wait
   * @return true if the lock was acquired
   * @throws InterruptedException if interrupted while waiting
   */
  boolean tryLock(Duration wait) throws InterruptedException;

  /**
   * Like {@link #tryLock(Duration)}, held for at most {@code leaseTime} (no watchdog).
   *
   * @param wait how long to wait
   * @param leaseTime how long the lock is held at most
   * @return true if the lock was acquired
   * @throws InterruptedException if interrupted while waiting
   */
  boolean tryLock(Duration wait, Duration leaseTime) throws InterruptedException;

  /**
   * Undoes one hold of the current owner.
   *
   * @throws IllegalMonitorStateException if the current owner holds no hold of this lock
   * @throws LeaseLostException if the owner's lease was lost before this call
   */
  @Override
  void unlock();

  /**
   * Asynchronous {@link #unlock()}; the owner is fixed when this method is called.
   *
   * @return completes when the backend has released the hold
   */
  CompletionStage<Void> unlockAsync();

  /**
   * @return true if any owner holds the lock now (asks the backend)
   */
  boolean isLocked();

  /**
   * @return true if the current owner (thread, or the bound token) holds the lock, as far as this
   *     client knows
   */
  boolean isHeldByCurrentOwner();

  /**
   * @return the number of holds of the current owner, as far as this client knows
   */
  int holdCount();

  /**
   * @return the time left on the lease of whoever holds the lock now, or empty if it is free (asks
   *     the backend)
   */
  Optional<Duration> remainingLease();

  /**
   * Releases the lock whoever holds it: an administrator's tool for a stuck lock. The owner that
   * lost it is told when its watchdog or unlock next talks to the backend.
   *
   * @return true if the lock was held
   */
  boolean forceUnlock();

  /**
   * Asks whoever holds this lock (every holder, in every mode) to give it up: cooperative
   * revocation, Curator's {@code Revoker}. The holders' {@linkplain Lease#onRevocationRequested
   * handlers} run in their own processes; nothing is released here, and a holder without a handler
   * keeps the lock. Works on any lock name, whichever primitive holds it (a lock, a fair lock, a
   * mutex, a read-write lock).
   *
   * @return true if the lock was held and its holders were asked; false if nobody holds it
   * @throws UnsupportedFeatureException if the backend lacks {@link Feature#REVOCATION}
   */
  boolean requestRevocation();

  /**
   * A view of this lock owned by {@code owner} instead of the calling thread: every method of the
   * view acts for that owner, from any thread or process that has the token.
   *
   * @param owner the explicit owner
   * @return the view
   */
  DistributedLock withOwner(OwnerToken owner);

  /**
   * Not supported: distributed conditions are not part of latchkey.
   *
   * @throws UnsupportedOperationException always
   */
  @Override
  Condition newCondition();
}
