package io.latchkey.internal;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import java.time.Duration;
import java.util.Objects;

/** Checks of caller input, each failing with a message that says what was wrong. */
final class Arguments {
  private Arguments() {}

  static String name(String kind, String name) {
    Objects.requireNonNull(name, () -> kind + " name must not be null");
    if (name.isBlank()) {
      throw new IllegalArgumentException(kind + " name must not be blank");
    }
    if (name.length() > Latchkey.MAX_NAME_LENGTH) {
      throw new IllegalArgumentException(
          kind
              + " name must be at most "
              + Latchkey.MAX_NAME_LENGTH
              + " characters, was "
              + name.length()
              + " ('"
              + name.substring(0, 40)
              + "…')");
    }
    for (int i = 0; i < name.length(); i++) {
      if (Character.isISOControl(name.charAt(i))) {
        throw new IllegalArgumentException(
            kind
                + " name must not contain control characters (found U+"
                + String.format("%04X", (int) name.charAt(i))
                + " at index "
                + i
                + ")");
      }
    }
    return name;
  }

  /** A wait: zero means try once. */
  static Duration wait(Duration wait) {
    Objects.requireNonNull(wait, "wait must not be null");
    if (wait.isNegative()) {
      throw new IllegalArgumentException("wait must not be negative, was " + wait);
    }
    if (wait.compareTo(LatchkeyOptions.MAX_DURATION) > 0) {
      throw new IllegalArgumentException(
          "wait must be at most " + LatchkeyOptions.MAX_DURATION + ", was " + wait);
    }
    return wait;
  }

  static Duration leaseTime(Duration leaseTime) {
    Objects.requireNonNull(leaseTime, "leaseTime must not be null");
    if (leaseTime.compareTo(LatchkeyOptions.MAX_DURATION) > 0) {
      throw new IllegalArgumentException(
          "leaseTime must be at most " + LatchkeyOptions.MAX_DURATION + ", was " + leaseTime);
    }
    if (leaseTime.compareTo(Duration.ofMillis(1)) < 0) {
      throw new IllegalArgumentException("leaseTime must be at least 1 ms, was " + leaseTime);
    }
    return leaseTime;
  }

  static int permits(int permits) {
    if (permits < 1) {
      throw new IllegalArgumentException("permits must be at least 1, was " + permits);
    }
    return permits;
  }

  static int initialPermits(int permits) {
    if (permits < 0) {
      throw new IllegalArgumentException("permits must not be negative, was " + permits);
    }
    return permits;
  }

  static int delta(int delta) {
    if (delta == 0) {
      throw new IllegalArgumentException("delta of permits must not be zero");
    }
    return delta;
  }

  static long count(long count) {
    if (count < 1) {
      throw new IllegalArgumentException("count must be at least 1, was " + count);
    }
    return count;
  }

  static String permitId(String permitId) {
    Objects.requireNonNull(permitId, "permitId must not be null");
    if (permitId.isBlank()) {
      throw new IllegalArgumentException("permitId must not be blank");
    }
    return permitId;
  }
}
