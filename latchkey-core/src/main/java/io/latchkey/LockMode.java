package io.latchkey;

/** How a holder holds a lock: alone, or beside other shared holders. */
public enum LockMode {
  /** A read hold: any number of shared holders may hold the lock together. */
  SHARED,
  /** A plain lock or a write hold: excludes every other owner. */
  EXCLUSIVE
}
