package io.latchkey;

import java.util.List;
import java.util.Objects;

/**
 * A leased semaphore as the backend sees it: its total, and who holds which permit for how long.
 * Expired permits are not shown and count as free.
 *
 * @param name the semaphore name
 * @param totalPermits the total number of permits, granted or not
 * @param permits the granted permits whose leases have not run out, in grant order
 */
public record LeasedSemaphoreInfo(String name, int totalPermits, List<PermitInfo> permits) {
  /** Checks and copies the components. */
  public LeasedSemaphoreInfo {
    Objects.requireNonNull(name, "name");
    permits = List.copyOf(permits);
  }

  /**
   * @return the permits granted now
   */
  public int acquiredPermits() {
    return permits.size();
  }

  /**
   * @return the permits free now: the total minus the granted ones; negative when the total was
   *     lowered below the number granted
   */
  public int availablePermits() {
    return totalPermits - permits.size();
  }
}
