package io.latchkey;

import java.time.Duration;
import java.util.Objects;

/**
 * One holder of a lock as the backend sees it.
 *
 * @param owner the owner id (a client id and thread, or an explicit token's id)
 * @param clientId the id of the client that made the grant; a monitor can check whether it is still
 *     alive
 * @param mode how it holds the lock
 * @param holds how many holds (re-entries) it has
 * @param remainingLease time left on its lease, by the backend's clock
 * @param fencingToken the token of its grant
 */
public record HolderInfo(
    String owner,
    String clientId,
    LockMode mode,
    int holds,
    Duration remainingLease,
    long fencingToken) {
  /** Checks the components. */
  public HolderInfo {
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(clientId, "clientId");
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(remainingLease, "remainingLease");
  }
}
