package io.latchkey.spi;

import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * The answer to one acquire attempt of a lock or leased permit.
 *
 * @param status what happened
 * @param fencingToken the grant's fencing token, when granted
 * @param holds the owner's holds after the grant (1 for a new holder or permit)
 * @param retryAfterMillis when refused: the time after which the obstacle runs out by itself (the
 *     holder's remaining lease), or -1 if unknown; waiters re-check no later than this
 * @param validForMillis when granted: how long the backend guarantees the grant from when the
 *     attempt was sent, if less than the lease asked for (a ZooKeeper session timeout, a SQL
 *     connection's liveness check); -1 if the lease is the bound. The engine trusts the earlier of
 *     the two.
 * @param retryWhen when refused: a stage that completes when it is worth trying again (ZooKeeper's
 *     watch on the predecessor node), or null to wait for the {@link WakeupBus}. The engine still
 *     re-checks by its own bounds, so a watch that never fires delays nobody for ever.
 */
public record AcquireResult(
    Status status,
    long fencingToken,
    int holds,
    long retryAfterMillis,
    long validForMillis,
    @Nullable CompletionStage<?> retryWhen) {
  /** What happened to the attempt. */
  public enum Status {
    /** The hold or permit was granted. */
    GRANTED,
    /** Someone else holds it, or (fair) someone is ahead in the queue, or no permit is free. */
    BUSY,
    /** The owner holds the shared side and asked for the exclusive side. */
    UPGRADE_REFUSED
  }

  /**
   * @param fencingToken the token of the grant
   * @param holds the owner's holds after it
   * @return a grant, valid for the lease asked for
   */
  public static AcquireResult granted(long fencingToken, int holds) {
    return new AcquireResult(Status.GRANTED, fencingToken, holds, -1, -1, null);
  }

  /**
   * @param fencingToken the token of the grant
   * @param holds the owner's holds after it
   * @param validForMillis how long the backend guarantees it from when the attempt was sent
   * @return a grant with a validity the backend caps
   */
  public static AcquireResult grantedFor(long fencingToken, int holds, long validForMillis) {
    return new AcquireResult(Status.GRANTED, fencingToken, holds, -1, validForMillis, null);
  }

  /**
   * @param retryAfterMillis when the obstacle runs out by itself, or -1
   * @return a refusal
   */
  public static AcquireResult busy(long retryAfterMillis) {
    return new AcquireResult(Status.BUSY, 0, 0, retryAfterMillis, -1, null);
  }

  /**
   * @param retryWhen completes when it is worth trying again (a watch fired)
   * @return a refusal to retry when {@code retryWhen} completes
   */
  public static AcquireResult busyUntil(CompletionStage<?> retryWhen) {
    return new AcquireResult(Status.BUSY, 0, 0, -1, -1, retryWhen);
  }

  /**
   * @return a refused upgrade
   */
  public static AcquireResult upgradeRefused() {
    return new AcquireResult(Status.UPGRADE_REFUSED, 0, 0, -1, -1, null);
  }

  /**
   * @return true if granted
   */
  public boolean isGranted() {
    return status == Status.GRANTED;
  }
}
