package io.latchkey;

import java.util.concurrent.locks.ReadWriteLock;

/**
 * A distributed read-write lock: any number of owners may hold the read lock at once; the write
 * lock excludes everyone else. Both sides are reentrant. The owner of the write lock may also take
 * the read lock (and release the write lock first: a downgrade). Asking for the write lock while
 * holding only the read lock fails at once with {@link LockUpgradeException} instead of
 * deadlocking.
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
