package io.latchkey.cli;

import io.latchkey.LatchkeyOptions;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Durations on the command line: whole numbers with a unit, {@code ms}, {@code s}, {@code m},
 * {@code h} or {@code d}, alone or combined ({@code 500ms}, {@code 30s}, {@code 2m}, {@code
 * 1m30s}); {@code 0} alone is zero. And how durations are shown, in the same units.
 */
final class Durations implements ITypeConverter<Duration> {
  private static final Pattern PART = Pattern.compile("(\\d{1,9})(ms|s|m|h|d)");

  @Override
  public Duration convert(String value) {
    return parse(value);
  }

  static Duration parse(String text) {
    String value = text.strip().toLowerCase(Locale.ROOT);
    if (value.equals("0")) {
      return Duration.ZERO;
    }
    Matcher part = PART.matcher(value);
    Duration total = Duration.ZERO;
    int end = 0;
    while (part.find() && part.start() == end) {
      long amount = Long.parseLong(part.group(1));
      total =
          total.plus(
              switch (part.group(2)) {
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofDays(amount);
              });
      end = part.end();
    }
    if (end == 0 || end != value.length()) {
      throw new TypeConversionException(
          "'"
              + text
              + "' is not a duration: use whole numbers with units, e.g. 500ms, 30s, 2m, 1h");
    }
    if (total.compareTo(LatchkeyOptions.MAX_DURATION) > 0) {
      throw new TypeConversionException(
          "'" + text + "' is longer than the most latchkey takes, 365d");
    }
    return total;
  }

  /**
   * Shows a duration to a person: {@code 850ms}, {@code 10s}, {@code 29.5s}, {@code 9m58s}, {@code
   * 2h5m}.
   */
  static String format(Duration duration) {
    long millis = duration.toMillis();
    if (millis < 1_000) {
      return millis + "ms";
    }
    if (millis < 60_000) {
      return millis % 1_000 == 0
          ? millis / 1_000 + "s"
          : String.format(Locale.ROOT, "%.1fs", millis / 1000.0);
    }
    long seconds = duration.toSeconds();
    if (seconds < 3_600) {
      return seconds / 60 + "m" + seconds % 60 + "s";
    }
    if (seconds < 86_400) {
      return seconds / 3_600 + "h" + seconds % 3_600 / 60 + "m";
    }
    return seconds / 86_400 + "d" + seconds % 86_400 / 3_600 + "h";
  }
}
