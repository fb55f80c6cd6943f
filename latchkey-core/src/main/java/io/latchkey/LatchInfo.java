package io.latchkey;

import java.util.Objects;

/**
 * A count-down latch that is still counting down, as the backend sees it.
 *
 * @param name the latch name
 * @param count the count left, at least one
 */
public record LatchInfo(String name, long count) {
  /** Checks the components. */
  public LatchInfo {
    Objects.requireNonNull(name, "name");
  }
}
