package io.latchkey.cli;

/**
 * The exit codes of the {@code latchkey} command, so that scripts can tell outcomes apart. {@code
 * latchkey exec} passes on the exit code of the command it ran; its own outcomes use codes that
 * follow {@code flock(1)}, {@code timeout(1)} and {@code env(1)}.
 */
final class ExitCodes {
  /** Success. */
  static final int OK = 0;

  /** The command failed: an unreachable backend, a bad backend URI, an unexpected error. */
  static final int FAILURE = 1;

  /** Bad usage: an unknown option, a missing argument, a malformed value. */
  static final int USAGE = 2;

  /** {@code exec}: the lock could not be had within {@code --wait}; the command did not run. */
  static final int LOCK_TIMEOUT = 75;

  /**
   * {@code exec}: the lease was lost (or its {@code --lease} ran out) while the command ran; the
   * command was signalled.
   */
  static final int LEASE_LOST = 76;

  /**
   * {@code exec}: latchkey itself failed before the command ran (bad usage, unreachable backend);
   * the lock is not held.
   */
  static final int EXEC_FAILED = 125;

  /** {@code exec}: the command was found but could not be started. */
  static final int CANNOT_EXECUTE = 126;

  /** {@code exec}: the command was not found. */
  static final int COMMAND_NOT_FOUND = 127;

  private ExitCodes() {}
}
