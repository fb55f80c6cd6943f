package io.latchkey.cli;

import io.latchkey.LatchkeyException;

/**
 * Turns an exception into the one line a user needs: what failed and why, no stack trace. Only the
 * first line of a message is kept (a failed server start appends the server's log, for instance).
 */
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
    if (message == null || message.isBlank()) {
      return t.getClass().getSimpleName();
    }
    return firstLine(message);
  }

  static String firstLine(String message) {
    String trimmed = message.strip();
    int newline = trimmed.indexOf('\n');
    return (newline < 0 ? trimmed : trimmed.substring(0, newline)).strip();
  }
}
