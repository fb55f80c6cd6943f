package io.latchkey;

/**
 * The owner holds the read lock and asked for the write lock of the same read-write lock. Such an
 * upgrade would deadlock against any other reader doing the same, so it is refused at once: release
 * the read lock first, or take the write lock from the start (a writer may then also read).
 */
public class LockUpgradeException extends LatchkeyException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message which lock and which owner
   */
  public LockUpgradeException(String message) {
    super(message);
  }
}
