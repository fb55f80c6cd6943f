package io.latchkey;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * A semaphore whose permits each have an id and a lease (Redisson's permit-expirable semaphore): a
 * permit whose holder dies returns to the pool when its lease runs out. Each acquire returns one
 * permit as a {@link Lease}; its {@link Lease#holderId()} is the permit id, which {@link
 * #release(String)} also accepts from another process.
 *
 * <p>The semaphore keeps a total of permits; the available ones are the total minus the granted
 * permits whose leases have not run out. As with {@link DistributedSemaphore}, the available count
 * is negative when {@link #addPermits(int)} took the total below the number granted.
 *
 * <p>Several permits can be taken at once, all or none ({@link #acquire(int, Duration)}): each is a
 * lease of its own, with its own id, and all of them share one fencing token.
 */
public interface LeasedSemaphore extends LeaseSource {

  /**
   * @param permits the initial number, zero or more
   * @return true if this call set it (it was never set before)
   */
  boolean trySetPermits(int permits);

  /**
   * @param delta a non-zero change of the total number of permits
   * @throws IllegalArgumentException if {@code delta} is zero, or would take the total past {@link
   *     Integer#MAX_VALUE} or below {@link Integer#MIN_VALUE} (the total is then left as it was)
   */
  void addPermits(int delta);

  /**
   * @return the permits free now: the total minus the granted permits whose leases have not run
   *     out; negative when the total was lowered below the number granted
   */
  int availablePermits();

  /**
   * @return the permits granted now, to any client, whose leases have not run out
   * @throws UnsupportedFeatureException without {@link Feature#SYNCHRONIZER_INSPECTION} and {@link
   *     Feature#ADMIN} (the count is read from the semaphore's inspection)
   */
  int acquiredPermits();

  /**
   * The permits this client holds on this semaphore, from its own records (no backend call): each
   * lease's {@link Lease#holderId()} is the permit id and {@link Lease#remaining()} its lease.
   * Permits lost or released are not listed.
   *
   * @return the valid permits of this client, in no particular order
   */
  List<Lease> heldPermits();

  /**
   * Waits as long as it takes for a permit; the watchdog keeps its lease alive until released.
   *
   * @return the permit
   * @throws InterruptedException if interrupted while waiting (nothing is held)
   */
  Lease acquire() throws InterruptedException;

  /**
   * Asynchronous {@link #acquire()}, completing as {@link #acquireAsync(Duration)} does.
   *
   * @return the permit
   */
  CompletionStage<Lease> acquireAsync();

  /**
   * Takes {@code permits} permits at once if that many are free now, all or none; the watchdog
   * keeps them alive.
   *
   * @param permits how many, at least one
   * @return the permits, or an empty list if fewer were free
   * @throws UnsupportedFeatureException without {@link Feature#PERMIT_BATCHES}
   */
  List<Lease> tryAcquire(int permits);

  /**
   * Waits as long as it takes for {@code permits} free permits and takes them in one atomic step;
   * the watchdog keeps them alive.
   *
   * @param permits how many, at least one
   * @return the permits, one lease each
   * @throws InterruptedException if interrupted while waiting (nothing is held)
   * @throws UnsupportedFeatureException without {@link Feature#PERMIT_BATCHES}
   */
  List<Lease> acquire(int permits) throws InterruptedException;

  /**
   * Asynchronous {@link #acquire(int)}.
   *
   * @param permits how many
   * @return the permits
   */
  CompletionStage<List<Lease>> acquireAsync(int permits);

  /**
   * Waits at most {@code wait} for {@code permits} free permits and takes them in one atomic step,
   * all or none; the watchdog keeps them alive until each is released.
   *
   * @param permits how many, at least one
   * @param wait how long to wait; zero tries once
   * @return the permits, one lease each (its {@link Lease#holderId()} is the permit id)
   * @throws LockTimeoutException if they were not free in time (nothing is held)
   * @throws InterruptedException if interrupted while waiting (nothing is held)
   * @throws UnsupportedFeatureException without {@link Feature#PERMIT_BATCHES}
   */
  List<Lease> acquire(int permits, Duration wait) throws InterruptedException;

  /**
   * Like {@link #acquire(int, Duration)}, each permit held for at most {@code leaseTime} (no
   * watchdog).
   *
   * @param permits how many, at least one
   * @param wait how long to wait; zero tries once
   * @param leaseTime how long the permits are held at most
   * @return the permits
   * @throws LockTimeoutException if they were not free in time (nothing is held)
   * @throws InterruptedException if interrupted while waiting (nothing is held)
   * @throws UnsupportedFeatureException without {@link Feature#PERMIT_BATCHES} or {@link
   *     Feature#PERMIT_LEASE_TIME}
   */
  List<Lease> acquire(int permits, Duration wait, Duration leaseTime) throws InterruptedException;

  /**
   * Asynchronous {@link #acquire(int, Duration)}.
   *
   * @param permits how many
   * @param wait how long to wait
   * @return the permits, or fails with {@link LockTimeoutException}
   */
  CompletionStage<List<Lease>> acquireAsync(int permits, Duration wait);

  /**
   * Asynchronous {@link #acquire(int, Duration, Duration)}.
   *
   * @param permits how many
   * @param wait how long to wait
   * @param leaseTime how long the permits are held at most
   * @return the permits, or fails with {@link LockTimeoutException}
   */
  CompletionStage<List<Lease>> acquireAsync(int permits, Duration wait, Duration leaseTime);

  /**
   * @param leaseTime how long the permit is held at most
   * @return a permit if one is free now
   * @throws UnsupportedFeatureException without {@link Feature#PERMIT_LEASE_TIME}
   */
  Optional<Lease> tryAcquire(Duration leaseTime);

  /**
   * Returns a permit by id, e.g. one acquired by another process.
   *
   * @param permitId the {@link Lease#holderId()} of the permit
   * @return true if the permit was held; false if it had expired or was already released
   */
  boolean release(String permitId);

  /**
   * Asynchronous {@link #release(String)}.
   *
   * @param permitId the {@link Lease#holderId()} of the permit
   * @return true if the permit was held
   */
  CompletionStage<Boolean> releaseAsync(String permitId);

  /**
   * Returns several permits by id in one atomic step, all or none: if any of them is not held (it
   * expired, or was released), none is released. Leases of this client among them are released with
   * them (releasing such a lease afterwards throws {@link IllegalStateException}).
   *
   * @param permitIds the permit ids, at least one, without repeats
   * @return true if all were held and are now released; false if nothing was released
   * @throws UnsupportedFeatureException without {@link Feature#PERMIT_BATCHES}
   */
  boolean release(List<String> permitIds);

  /**
   * Asynchronous {@link #release(List)}.
   *
   * @param permitIds the permit ids
   * @return true if all were held and are now released
   */
  CompletionStage<Boolean> releaseAsync(List<String> permitIds);

  /**
   * Gives a held permit a new lease, counted from now by the backend's clock, whether shorter or
   * longer than what was left (Redisson's {@code updateLeaseTime}). A permit of this client that
   * the watchdog kept alive is no longer renewed: its lease ends after {@code leaseTime}, and its
   * {@link Lease} says so. (The watchdog of another client that holds the permit renews it again at
   * its next renewal: update such a permit from the client that holds it.)
   *
   * @param permitId the {@link Lease#holderId()} of the permit, of this client or another
   * @param leaseTime the new lease
   * @return true if the permit was held and has the new lease; false if it had expired or was
   *     released
   * @throws UnsupportedFeatureException without {@link Feature#PERMIT_LEASE_UPDATE} or {@link
   *     Feature#PERMIT_LEASE_TIME}
   */
  boolean updateLeaseTime(String permitId, Duration leaseTime);

  /**
   * Asynchronous {@link #updateLeaseTime(String, Duration)}.
   *
   * @param permitId the permit id
   * @param leaseTime the new lease
   * @return true if the permit was held and has the new lease
   */
  CompletionStage<Boolean> updateLeaseTimeAsync(String permitId, Duration leaseTime);

  /**
   * Deletes the semaphore's record: its total and every granted permit. Holders of its permits
   * learn it as a lost lease (at their next renewal or release); waiters go on waiting for permits
   * added later. Fencing tokens of later grants still grow.
   *
   * @return true if the record existed
   * @throws UnsupportedFeatureException without {@link Feature#DELETE_RECORDS}
   */
  boolean delete();

  /**
   * @return true if the semaphore's record exists: its total was set or changed and not deleted
   *     since
   * @throws UnsupportedFeatureException without {@link Feature#DELETE_RECORDS}
   */
  boolean isExists();
}
