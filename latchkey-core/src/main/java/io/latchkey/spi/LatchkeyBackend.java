package io.latchkey.spi;

import io.latchkey.Feature;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * One client's connection to a lock service. Every operation is atomic on the backend and returns
 * at once with a stage; failures complete the stage exceptionally. Expiry is judged by the
 * backend's clock, never by comparing client clocks.
 *
 * <p>The stores for optional features are only asked for when {@link #features()} declares them.
 */
public interface LatchkeyBackend extends AutoCloseable {
  /**
   * @return a description for messages and logs, without secrets (e.g. {@code redis://host:6379})
   */
  String description();

  /**
   * @return the optional features this backend has
   */
  Set<Feature> features();

  /**
   * @return the lock records
   */
  LockStore locks();

  /**
   * @return the semaphores, if {@link Feature#SEMAPHORE} is declared
   */
  SemaphoreStore semaphores();

  /**
   * @return the leased semaphores, if {@link Feature#LEASED_SEMAPHORE} is declared
   */
  LeasedSemaphoreStore leasedSemaphores();

  /**
   * @return the count-down latches, if {@link Feature#COUNT_DOWN_LATCH} is declared
   */
  LatchStore latches();

  /**
   * @return the wake-up channel; {@link WakeupBus#NONE} without {@link Feature#WAKEUP_PUSH}
   */
  WakeupBus wakeups();

  /**
   * Extends the leases of many holders at once, each to at least {@code leaseMillis} from now. The
   * watchdog calls this once per batch per period, so a backend should make it one round trip (or
   * one per shard).
   *
   * @param holders lock owners and leased permits to renew
   * @param leaseMillis the new lease, from now by the backend's clock; never shortens a lease
   * @return the holders that are no longer held (expired, released elsewhere, force-released)
   */
  CompletionStage<Set<HolderRef>> renew(Collection<HolderRef> holders, long leaseMillis);

  /** Closes connections; held records stay on the server until released or expired. */
  @Override
  void close();
}
