package io.latchkey.spi;

/** The kinds of named records a backend keeps; each kind has its own name space. */
public enum ResourceType {
  /** Locks: reentrant, fair, mutex and read-write all share one record per name. */
  LOCK,
  /** Counting semaphores without owners. */
  SEMAPHORE,
  /** Semaphores whose permits have ids and leases. */
  LEASED_SEMAPHORE,
  /** Count-down latches. */
  COUNT_DOWN_LATCH
}
