package io.latchkey;

import java.util.List;
import java.util.Optional;

/**
 * The monitor's view of a backend: which locks are held, by whom, for how long, and the power to
 * free one. Every operation needs {@link Feature#ADMIN}; listing live clients also needs {@link
 * Feature#PRESENCE}.
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
   */
  Optional<LockInfo> inspect(String name);

  /**
   * Frees a lock whoever holds it, in every mode, and wakes its waiters.
   *
   * @param name a lock name
   * @return true if it was held
   */
  boolean forceRelease(String name);

  /**
   * Removes one holder of a lock (every hold it has, in every mode) and wakes the next waiter: the
   * reaper's tool for a holder whose client is dead. The holder's client, if it is alive after all,
   * hears of it as a lost lease.
   *
   * @param name a lock name
   * @param owner the holder's owner id ({@link HolderInfo#owner()})
   * @return true if that owner held the lock
   */
  boolean evict(String name, String owner);

  /**
   * @return the clients alive on this backend now, by their presence records
   * @throws UnsupportedFeatureException if the backend cannot list clients ({@link
   *     Feature#PRESENCE})
   */
  List<ClientInfo> clients();
}
