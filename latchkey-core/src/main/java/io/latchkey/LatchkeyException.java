package io.latchkey;

import org.jspecify.annotations.Nullable;

/** Base of the exceptions latchkey throws for distributed-coordination failures. */
public class LatchkeyException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what went wrong, naming the resource involved
   */
  public LatchkeyException(String message) {
    super(message);
  }

  /**
   * @param message what went wrong, naming the resource involved
   * @param cause the underlying failure
   */
  public LatchkeyException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}
