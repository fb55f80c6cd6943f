package io.latchkey.cli;

/** The exit codes of the {@code latchkey} command, so that scripts can tell outcomes apart. */
final class ExitCodes {
  /** Success. */
  static final int OK = 0;

  /** The command failed: bad input, an unreachable backend, an unexpected error. */
  static final int FAILURE = 1;

  private ExitCodes() {}
}
