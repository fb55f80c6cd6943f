package io.latchkey;

/**
 * The resource could not be acquired within the wait the caller allowed. Nothing is held when this
 * is thrown.
 */
public class LockTimeoutException extends LatchkeyException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message which resource and how long the caller waited
   */
  public LockTimeoutException(String message) {
    super(message);
  }
}
