package io.latchkey.spi;

/**
 * The answer to a release of one hold.
 *
 * @param wasHeld false if the owner held nothing in that mode (expired, force-released, or never
 *     held); nothing was changed then
 * @param remainingHolds the owner's holds left in that mode
 */
public record ReleaseResult(boolean wasHeld, int remainingHolds) {
  /** The owner held nothing. */
  public static final ReleaseResult NOT_HELD = new ReleaseResult(false, 0);

  /**
   * @param remainingHolds holds left in that mode
   * @return a successful release
   */
  public static ReleaseResult released(int remainingHolds) {
    return new ReleaseResult(true, remainingHolds);
  }
}
