package io.latchkey;

import java.util.List;
import java.util.Optional;

/**
 * The monitor's view of a backend: which locks are held, by whom, for how long, and the power to
 * free one. Listing and inspection need {@link Feature#INSPECTION}.
 */
public interface LockAdmin {
  /**
   * @return every lock held now, by name
   * @throws UnsupportedFeatureException if the backend cannot list locks
   */
  List<LockInfo> list();

  /**
   * @param name a lock name
   * @return the lock if it is held now
   * @throws UnsupportedFeatureException if the backend cannot inspect locks
   */
  Optional<LockInfo> inspect(String name);

  /**
   * Frees a lock whoever holds it, in every mode, and wakes its waiters.
   *
   * @param name a lock name
   * @return true if it was held
   */
  boolean forceRelease(String name);
}
