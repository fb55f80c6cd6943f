package io.latchkey;

import java.time.Duration;
import java.util.Objects;

/**
 * One granted permit of a leased semaphore as the backend sees it.
 *
 * @param permitId the permit id ({@link Lease#holderId()} of its lease)
 * @param clientId the id of the client that was granted the permit; a monitor can check whether it
 *     is still alive
 * @param remainingLease time left on the permit's lease, by the backend's clock
 * @param fencingToken the token of its grant (permits granted together share one)
 */
public record PermitInfo(
    String permitId, String clientId, Duration remainingLease, long fencingToken) {
  /** Checks the components. */
  public PermitInfo {
    Objects.requireNonNull(permitId, "permitId");
    Objects.requireNonNull(clientId, "clientId");
    Objects.requireNonNull(remainingLease, "remainingLease");
  }
}
