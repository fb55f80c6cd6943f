package io.latchkey;

import org.jspecify.annotations.Nullable;

/**
 * A lease this client believed it held is gone: it expired, its renewal was refused or kept failing
 * until it ran out, or an administrator force-released it. Work done under the lease since then was
 * not protected; the fencing token lets the protected resource reject it.
 */
public class LeaseLostException extends LatchkeyException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message which lease was lost and why
   * @param cause the failure that made renewal impossible, if any
   */
  public LeaseLostException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}
