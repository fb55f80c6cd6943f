package io.latchkey;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * A semaphore whose permits each have an id and a lease (Redisson's permit-expirable semaphore): a
 * permit whose holder dies returns to the pool when its lease runs out. Each acquire returns one
 * permit as a {@link Lease}; its {@link Lease#holderId()} is the permit id, which {@link
 * #release(String)} also accepts from another process.
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
   * @return the permits free now (expired permits count as free)
   */
  int availablePermits();

  /**
   * @param leaseTime how long the permit is held at most
   * @return a permit if one is free now
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
}
