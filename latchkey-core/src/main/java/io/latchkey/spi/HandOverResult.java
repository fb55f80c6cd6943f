package io.latchkey.spi;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The answer to {@link LockStore#releaseAndHandOver}: the release's, and the next waiter's attempt
 * if the backend made it.
 *
 * @param released the release's answer, as {@link LockStore#release} gives it
 * @param next the answer to the next waiter's attempt, or null if it was not attempted (the lock
 *     did not become acquirable for it, or another waiter heads the queue). An attempt that was
 *     made may also be refused, as any attempt (e.g. a waiter that had no place in the queue was
 *     given one behind another client's waiter): the engine then waits as after that refusal.
 */
public record HandOverResult(ReleaseResult released, @Nullable AcquireResult next) {
  /** Checks the components. */
  public HandOverResult {
    Objects.requireNonNull(released, "released");
  }
}
