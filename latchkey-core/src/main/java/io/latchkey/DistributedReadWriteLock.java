package io.latchkey;

import java.util.concurrent.locks.ReadWriteLock;

/**
 * A distributed read-write lock: any number of owners may hold the read lock at once; the write
 * lock excludes everyone else. Both sides are reentrant. The owner of the write lock may also take
 * the read lock (and release the write lock first: a downgrade).
 *
 * <p>An owner that holds only the read lock cannot take the write lock (an upgrade would deadlock
 * against any other reader doing the same). Its {@code writeLock().tryLock()} forms and {@code
 * tryAcquire()} answer {@code false} (empty) at once, as {@link
 * java.util.concurrent.locks.Lock#tryLock()} requires of a lock that is not free. The explicit way
 * to ask for an upgrade is any acquire or lock form of the write side ({@code acquire}, {@code
 * acquireAsync}, {@code lock}, {@code lockInterruptibly}): it fails loudly, at once, with {@link
 * LockUpgradeException}, so that the mistake shows instead of a wait that can never end.
 *
 * <p>Writers are preferred: while a writer waits for the write lock, an owner that does not hold
 * the lock yet does not get the read lock either ({@code tryLock()} returns {@code false}, {@code
 * acquire} waits), unless it was waiting for it before that writer came. So readers cannot starve a
 * writer. An owner that holds the lock (a reader re-entering, the writer reading) is never held
 * back. A writer that gives up stops holding readers back at once; one whose process died, after
 * {@link LatchkeyOptions#queueKeepAlive()}.
 *
 * <p>The write side is the same lock as {@link Latchkey#lock(String)} of that name.
 */
public interface DistributedReadWriteLock extends ReadWriteLock {
  /**
   * @return the lock name
   */
  String name();

  /**
   * @return the shared side
   */
  @Override
  DistributedLock readLock();

  /**
   * @return the exclusive side
   */
  @Override
  DistributedLock writeLock();

  /**
   * @param owner the explicit owner
   * @return a view of this lock whose both sides act for {@code owner}
   */
  DistributedReadWriteLock withOwner(OwnerToken owner);
}
