package io.latchkey;

import java.util.List;
import java.util.Optional;

/**
 * The monitor's view of a backend: which locks are held, by whom, for how long, and the power to
 * free one; and the state of semaphores, leased semaphores and latches. Every operation needs
 * {@link Feature#ADMIN}; listing live clients also needs {@link Feature#PRESENCE}, and the views of
 * semaphores and latches {@link Feature#SYNCHRONIZER_INSPECTION}.
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

  /**
   * @param name a semaphore name
   * @return the semaphore, if its record exists
   * @throws UnsupportedFeatureException without {@link Feature#SYNCHRONIZER_INSPECTION}
   */
  Optional<SemaphoreInfo> inspectSemaphore(String name);

  /**
   * @param name a leased semaphore name
   * @return the semaphore with its granted permits, if its record exists
   * @throws UnsupportedFeatureException without {@link Feature#SYNCHRONIZER_INSPECTION}
   */
  Optional<LeasedSemaphoreInfo> inspectLeasedSemaphore(String name);

  /**
   * @param name a latch name
   * @return the latch, if it is counting down
   * @throws UnsupportedFeatureException without {@link Feature#SYNCHRONIZER_INSPECTION}
   */
  Optional<LatchInfo> inspectLatch(String name);

  /**
   * @return every semaphore whose record exists, by name
   * @throws UnsupportedFeatureException without {@link Feature#SYNCHRONIZER_INSPECTION}
   */
  List<SemaphoreInfo> listSemaphores();

  /**
   * @return every leased semaphore whose record exists, by name
   * @throws UnsupportedFeatureException without {@link Feature#SYNCHRONIZER_INSPECTION}
   */
  List<LeasedSemaphoreInfo> listLeasedSemaphores();

  /**
   * @return every latch counting down, by name
   * @throws UnsupportedFeatureException without {@link Feature#SYNCHRONIZER_INSPECTION}
   */
  List<LatchInfo> listLatches();
}
