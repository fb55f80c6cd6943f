package io.latchkey.spi;

import java.util.Objects;

/**
 * Identifies one grant: a holder ({@link HolderRef}) and the fencing token the backend gave it.
 * Renewal, release and loss reports name grants, not holders alone: a record that the backend
 * re-granted to the same owner after the first grant was lost carries a new token, so the old grant
 * can neither renew nor release it.
 *
 * @param holder the lock owner or leased permit
 * @param fencingToken the token of the grant, positive; {@link #ANY_TOKEN} only where the SPI says
 *     so
 */
public record GrantRef(HolderRef holder, long fencingToken) {
  /**
   * Stands for "whatever grant this holder has": only for a release by an owner token that did not
   * take the grant itself (another process of the same owner did), so it cannot know the token.
   */
  public static final long ANY_TOKEN = 0;

  /** Checks the components. */
  public GrantRef {
    Objects.requireNonNull(holder, "holder");
    if (fencingToken < 0) {
      throw new IllegalArgumentException("fencingToken must not be negative: " + fencingToken);
    }
  }

  /**
   * @return the resource type
   */
  public ResourceType type() {
    return holder.type();
  }

  /**
   * @return the resource name
   */
  public String name() {
    return holder.name();
  }

  /**
   * @return the owner id or permit id
   */
  public String holderId() {
    return holder.holderId();
  }

  /**
   * @param recordedToken the token a backend has on record for this holder
   * @return true if this grant is the one on record
   */
  public boolean matches(long recordedToken) {
    return fencingToken == ANY_TOKEN || fencingToken == recordedToken;
  }
}
