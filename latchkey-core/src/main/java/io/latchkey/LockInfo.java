package io.latchkey;

import java.util.List;
import java.util.Objects;

/**
 * A held lock as the backend sees it, for monitors and administrators.
 *
 * @param name the lock name
 * @param holders who holds it (one exclusive holder, or shared holders)
 * @param queuedWaiters requests waiting in the lock's wait queue (fair or not; a {@code tryLock}
 *     that does not wait is not counted)
 */
public record LockInfo(String name, List<HolderInfo> holders, int queuedWaiters) {
  /** Checks and copies the components. */
  public LockInfo {
    Objects.requireNonNull(name, "name");
    holders = List.copyOf(holders);
  }
}
