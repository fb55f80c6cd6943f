package io.latchkey;

import org.jspecify.annotations.Nullable;

/**
 * The backend could not be reached or failed to carry out an operation. Whether the operation took
 * effect is unknown; latchkey compensates where it can (an acquire whose answer was lost is
 * released again).
 */
public class BackendUnavailableException extends LatchkeyException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message which backend and which operation
   * @param cause the client library's failure
   */
  public BackendUnavailableException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}
