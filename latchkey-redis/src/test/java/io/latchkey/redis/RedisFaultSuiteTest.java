package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.latchkey.servers.RedisTestServer;
import io.latchkey.testkit.faults.FaultKind;
import io.latchkey.testkit.faults.FaultMode;
import io.latchkey.testkit.faults.FaultReport;
import io.latchkey.testkit.faults.FaultRun;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The whole fault suite on a standalone Redis: every mode with every fault kind, for {@code
 * -Dlatchkey.faults.duration} per mode (default {@code 2m}; {@code 90s}, {@code 10m}, {@code 1h}
 * work too), with a 2 s lease renewed every third. {@code -Dlatchkey.faults.seed=N} replays a
 * schedule; {@code -Dlatchkey.faults.modes=EXPLICIT_LEASE_LOCK,...} and {@code
 * -Dlatchkey.faults.kinds=FREEZE_CONNECTION,...} narrow the run (a seed replays with the same
 * kinds). Each report is printed and written to {@code target/fault-reports/MODE.txt}.
 *
 * <p>It asserts the targets: no unexplained overlap, no stale write accepted, no repeated token,
 * and the lock free for at most lease + renew interval after a holder died. Run with {@code mvn -B
 * -pl latchkey-redis -am verify -Psoak -Dtest=RedisFaultSuiteTest
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@Tag("slow")
class RedisFaultSuiteTest {
  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h)");

  @ParameterizedTest
  @EnumSource(FaultMode.class)
  void everyFaultKind(FaultMode mode) throws Exception {
    assumeTrue(
        listed("latchkey.faults.modes", FaultMode.class).contains(mode),
        mode + " is not in -Dlatchkey.faults.modes");
    try (RedisTestServer redis = RedisTestServer.start()) {
      FaultRun.Builder builder =
          FaultRun.builder(mode)
              .faults(listed("latchkey.faults.kinds", FaultKind.class))
              .duration(duration(System.getProperty("latchkey.faults.duration", "2m")))
              .workers(3)
              .lease(Duration.ofSeconds(2));
      String seed = System.getProperty("latchkey.faults.seed");
      if (seed != null && !seed.isBlank()) {
        builder.seed(Long.parseLong(seed.trim()));
      }
      FaultReport report = builder.build().run(new RedisServerControl(redis));
      Path reports = Path.of("target", "fault-reports");
      Files.createDirectories(reports);
      Files.writeString(
          reports.resolve(mode.name().toLowerCase(Locale.ROOT) + ".txt"),
          report.describe(),
          StandardCharsets.UTF_8);

      String context = report.describe();
      SoftAssertions softly = new SoftAssertions();
      softly.assertThat(report.workerErrors()).as(context).isEmpty();
      softly.assertThat(report.unexplainedOverlaps()).as(context).isZero();
      softly.assertThat(report.staleWritesAccepted()).as(context).isZero();
      softly.assertThat(report.repeatedTokens()).as(context).isZero();
      softly
          .assertThat(report.longestFreeAfterDeathMillis())
          .as(context)
          .isLessThanOrEqualTo(report.livenessBoundMillis());
      softly.assertAll();
    }
  }

  /** The constants named in a comma-separated system property, or all of them if it is unset. */
  private static <E extends Enum<E>> Set<E> listed(String property, Class<E> type) {
    String names = System.getProperty(property, "").trim();
    if (names.isEmpty()) {
      return EnumSet.allOf(type);
    }
    Set<E> chosen = EnumSet.noneOf(type);
    for (String name : names.split(",", -1)) {
      chosen.add(Enum.valueOf(type, name.trim().toUpperCase(Locale.ROOT)));
    }
    return chosen;
  }

  private static Duration duration(String text) {
    Matcher matcher = DURATION.matcher(text.trim());
    assertThat(matcher.matches())
        .as("latchkey.faults.duration must be a number with ms, s, m or h: " + text)
        .isTrue();
    long amount = Long.parseLong(matcher.group(1));
    return switch (matcher.group(2)) {
      case "ms" -> Duration.ofMillis(amount);
      case "s" -> Duration.ofSeconds(amount);
      case "m" -> Duration.ofMinutes(amount);
      default -> Duration.ofHours(amount);
    };
  }
}
