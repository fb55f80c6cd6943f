package io.latchkey.spring;

import java.time.Duration;
import org.springframework.boot.convert.DurationStyle;

/** Parses the durations of latchkey's annotations, with errors that name the attribute. */
final class Durations {
  private Durations() {}

  /**
   * @param value e.g. {@code 10s}, {@code 500ms} or {@code PT1M}
   * @param what the annotation attribute, for the message
   * @return the duration, not negative
   * @throws IllegalArgumentException if it is malformed or negative
   */
  static Duration parse(String value, String what) {
    Duration parsed;
    try {
      parsed = DurationStyle.detectAndParse(value.trim());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          what + " = \"" + value + "\" is not a duration (write e.g. 10s, 500ms or PT1M)", e);
    }
    if (parsed.isNegative()) {
      throw new IllegalArgumentException(what + " = \"" + value + "\" must not be negative");
    }
    return parsed;
  }
}
