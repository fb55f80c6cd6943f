package io.latchkey.internal;

import io.latchkey.DistributedLock;

/**
 * The global order in which {@link io.latchkey.MultiLock} takes its members: by backend, then by
 * name. Every process that uses the same lock service and names computes the same order, however it
 * spelled the URI ({@link io.latchkey.spi.LatchkeyBackend#identity()}).
 */
public final class LockOrdering {
  private LockOrdering() {}

  /**
   * @param lock a lock made by latchkey
   * @return its place in the global order
   * @throws IllegalArgumentException if the lock was not made by latchkey
   */
  public static String key(DistributedLock lock) {
    return handle(lock).client().backend().identity() + '\u0000' + lock.name();
  }

  /**
   * @param lock a lock made by latchkey
   * @return the lock bound to the owner the calling thread would use now
   */
  public static DistributedLock bindToCurrentOwner(DistributedLock lock) {
    return handle(lock).boundToCurrentOwner();
  }

  private static LockHandle handle(DistributedLock lock) {
    if (lock instanceof LockHandle handle) {
      return handle;
    }
    throw new IllegalArgumentException(
        "a multi-lock takes locks made by latchkey, not " + lock.getClass().getName());
  }
}
