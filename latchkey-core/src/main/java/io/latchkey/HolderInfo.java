package io.latchkey;

import java.time.Duration;
import java.util.Objects;

/**
 * One holder of a lock as the backend sees it.
 *
 * <p>{@link #toString()} shows only the first characters of an owner that is an {@link OwnerToken}
 * (a credential, which does not belong in logs); {@link #owner()} gives the whole id.
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

  /** Like the record's own form, with an owner token cut short as {@link OwnerToken} shows it. */
  @Override
  public String toString() {
    return "HolderInfo[owner="
        + OwnerToken.masked(owner)
        + ", clientId="
        + clientId
        + ", mode="
        + mode
        + ", holds="
        + holds
        + ", remainingLease="
        + remainingLease
        + ", fencingToken="
        + fencingToken
        + "]";
  }
}
