package io.latchkey.spi;

/**
 * The answer to one acquire attempt of a lock or leased permit.
 *
 * @param status what happened
 * @param fencingToken the grant's fencing token, when granted
 * @param holds the owner's holds after the grant (1 for a new holder or permit)
 * @param retryAfterMillis when refused: the time after which the obstacle runs out by itself (the
 *     holder's remaining lease), or -1 if unknown; waiters re-check no later than this
 */
public record AcquireResult(Status status, long fencingToken, int holds, long retryAfterMillis) {
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
   * @return a grant
   */
  public static AcquireResult granted(long fencingToken, int holds) {
    return new AcquireResult(Status.GRANTED, fencingToken, holds, -1);
  }

  /**
   * @param retryAfterMillis when the obstacle runs out by itself, or -1
   * @return a refusal
   */
  public static AcquireResult busy(long retryAfterMillis) {
    return new AcquireResult(Status.BUSY, 0, 0, retryAfterMillis);
  }

  /**
   * @return a refused upgrade
   */
  public static AcquireResult upgradeRefused() {
    return new AcquireResult(Status.UPGRADE_REFUSED, 0, 0, -1);
  }

  /**
   * @return true if granted
   */
  public boolean isGranted() {
    return status == Status.GRANTED;
  }
}
