package io.latchkey.cli;

import io.latchkey.LatchkeyException;

/** Turns an exception into the one line a user needs: what failed and why, no stack trace. */
final class OneLineErrors {
  private OneLineErrors() {}

  static String describe(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null
        && !(t instanceof LatchkeyException)
        && !(t instanceof IllegalArgumentException)
        && (t.getMessage() == null || t.getMessage().equals(t.getCause().toString()))) {
      t = t.getCause();
    }
    String message = t.getMessage();
    return message == null || message.isBlank() ? t.getClass().getSimpleName() : message;
  }
}
