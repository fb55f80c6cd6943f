package io.latchkey.spi;

import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The answer to one {@link LatchkeyBackend#renew} call. Every grant asked for is in exactly one
 * place: in {@link #gone()}, in {@link #failed()}, or (renewed) in neither.
 *
 * @param gone grants the backend no longer has (expired, released elsewhere, force-released, or
 *     re-granted to the same owner with another token): the engine reports them lost at once
 * @param failed grants whose part of the call failed (a Redis Cluster master that did not answer,
 *     one statement of several that timed out), with the failure: they are neither confirmed nor
 *     gone, and stay valid as long as their last confirmed lease lasts
 * @param validForMillis how long the backend guarantees the renewed grants, from when the call was
 *     sent, if that is less than the lease asked for (a ZooKeeper session timeout); -1 if the lease
 *     asked for is the bound
 */
public record RenewResult(
    Set<GrantRef> gone, Map<GrantRef, Throwable> failed, long validForMillis) {
  /** Everything renewed, no cap. */
  public static final RenewResult ALL_RENEWED = new RenewResult(Set.of(), Map.of(), -1);

  /** Copies the components. */
  public RenewResult {
    gone = Set.copyOf(Objects.requireNonNull(gone, "gone"));
    failed = Map.copyOf(Objects.requireNonNull(failed, "failed"));
  }

  /**
   * @param gone the grants that are gone
   * @return a result where every other grant was renewed, without a validity cap
   */
  public static RenewResult gone(Set<GrantRef> gone) {
    return gone.isEmpty() ? ALL_RENEWED : new RenewResult(gone, Map.of(), -1);
  }
}
