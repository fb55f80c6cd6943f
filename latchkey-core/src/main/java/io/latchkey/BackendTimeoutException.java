package io.latchkey;

/**
 * The backend did not answer one operation within {@link LatchkeyOptions#operationTimeout()}.
 * Thrown instead of hanging when a server is down or unreachable.
 */
public class BackendTimeoutException extends BackendUnavailableException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message which backend, which operation and the bound that passed
   */
  public BackendTimeoutException(String message) {
    super(message, null);
  }
}
