package io.latchkey.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Bounded polling: every wait in this package goes through here and ends at its deadline.
 *
 * <p>A condition that fails with an I/O error or a Redis error reply is taken as "not yet" (the
 * server is still starting, a node does not know its peers yet); any other exception ends the wait
 * at once.
 */
final class Polling {
  static final Duration INTERVAL = Duration.ofMillis(50);

  /** A condition that may throw while the thing it probes is not ready yet. */
  @FunctionalInterface
  interface Condition {
    boolean holds() throws IOException;
  }

  /** The condition did not hold before the deadline. */
  static final class TimeoutException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    TimeoutException(String message) {
      super(message);
    }
  }

  private Polling() {}

  /**
   * Polls {@code condition} until it holds or {@code timeout} has passed.
   *
   * @throws TimeoutException on timeout, naming {@code what} and the last failure
   * @throws IllegalStateException when the thread is interrupted (the interrupt flag stays set)
   */
  static void await(Duration timeout, String what, Condition condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    @Nullable Exception lastFailure = null;
    while (true) {
      try {
        if (condition.holds()) {
          return;
        }
        lastFailure = null;
      } catch (IOException | UncheckedIOException | RedisErrorReplyException e) {
        lastFailure = e;
      }
      if (System.nanoTime() - deadline >= 0) {
        TimeoutException timedOut =
            new TimeoutException(
                "Timed out after "
                    + timeout.toMillis()
                    + " ms waiting for "
                    + what
                    + (lastFailure == null ? "" : "; last failure: " + lastFailure));
        if (lastFailure != null) {
          timedOut.addSuppressed(lastFailure);
        }
        throw timedOut;
      }
      sleep(INTERVAL, what);
    }
  }

  /** Sleeps, turning an interrupt into an {@link IllegalStateException} with the flag kept. */
  static void sleep(Duration duration, String what) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting for " + what, e);
    }
  }
}
