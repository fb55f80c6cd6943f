package io.latchkey;

/**
 * Optional capabilities a backend declares. Reentrant exclusive locks with leases and fencing
 * tokens are not optional: every backend has them. A backend without a feature refuses the
 * primitives that need it with {@link UnsupportedFeatureException}.
 */
public enum Feature {
  /** First-come first-served locks with a wait queue whose dead entries time out. */
  FAIR_LOCK,
  /** Shared (read) holds beside exclusive (write) holds on one lock name. */
  READ_WRITE_LOCK,
  /** Counting semaphores without owners. */
  SEMAPHORE,
  /** Semaphores whose permits each have an id and a lease. */
  LEASED_SEMAPHORE,
  /** Count-down latches. */
  COUNT_DOWN_LATCH,
  /**
   * Releases push wake-ups to waiting clients. Without it, waiters re-check with a jittered
   * back-off.
   */
  WAKEUP_PUSH,
  /**
   * Held locks and live clients can be listed ({@link LockAdmin#list()}, {@link
   * LockAdmin#clients()}); inspecting one lock needs no feature.
   */
  INSPECTION
}
