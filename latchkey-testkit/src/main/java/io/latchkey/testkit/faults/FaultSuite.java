package io.latchkey.testkit.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
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

/**
 * The fault suite as each backend's suite test runs it: one {@link FaultRun} per mode, configured
 * from system properties, its report written to {@code target/fault-reports/NAME.txt}, and the
 * targets asserted.
 *
 * <ul>
 *   <li>{@value #DURATION} — faults per mode, like {@code 90s}, {@code 2m} (the default), {@code
 *       1h};
 *   <li>{@value #SEED} — replays a schedule (with the same kinds);
 *   <li>{@value #THREADS} — threads of each worker's client on the lock (default 1); with more, the
 *       report's name ends in {@code -Nthreads};
 *   <li>{@value #MODES} and {@value #KINDS} — comma-separated {@link FaultMode} and {@link
 *       FaultKind} names that narrow the run (default: all of them; server faults only where the
 *       backend can inject them).
 * </ul>
 *
 * The targets: no worker error, no unexplained overlap, no stale write accepted, no repeated token
 * and, where the backend promises it, the lock free for at most lease + renew interval (plus the
 * server's {@linkplain ServerControl#explicitPermitReapDelay() reap delay} for permits with an
 * explicit lease) after a holder died.
 */
public final class FaultSuite {
  /** System property: how long each mode runs. */
  public static final String DURATION = "latchkey.faults.duration";

  /** System property: the seed of the fault schedule. */
  public static final String SEED = "latchkey.faults.seed";

  /** System property: how many threads of each worker's client take the lock. */
  public static final String THREADS = "latchkey.faults.threads";

  /** System property: the modes to run. */
  public static final String MODES = "latchkey.faults.modes";

  /** System property: the fault kinds to inject. */
  public static final String KINDS = "latchkey.faults.kinds";

  private static final Pattern DURATION_TEXT = Pattern.compile("(\\d+)(ms|s|m|h)");
  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final int WORKERS = 3;

  private FaultSuite() {}

  /**
   * @param mode a mode
   * @return whether {@value #MODES} selects it (every mode when unset)
   */
  public static boolean selected(FaultMode mode) {
    return listed(MODES, FaultMode.class).contains(mode);
  }

  /**
   * Runs {@code mode} against {@code server} with 3 workers ({@value #THREADS} threads each, 1 by
   * default) and a 2 s lease, writes the report and asserts the targets.
   *
   * @param reportName the report's file name, without {@code .txt} (and without the {@code
   *     -Nthreads} that {@value #THREADS} above 1 adds)
   * @param livenessPromised whether to assert the liveness bound (a quorum whose crashed member
   *     sits out a quarantine does not promise it)
   * @return the report, for more checks
   */
  public static FaultReport runAndCheck(
      FaultMode mode, ServerControl server, String reportName, boolean livenessPromised)
      throws IOException, InterruptedException {
    Set<FaultKind> kinds = listed(KINDS, FaultKind.class);
    int threads = Integer.parseInt(System.getProperty(THREADS, "1").trim());
    kinds.removeIf(kind -> kind.serverFault() && !server.serverFaults().contains(kind));
    FaultRun.Builder builder =
        FaultRun.builder(mode)
            .faults(kinds)
            .duration(duration(System.getProperty(DURATION, "2m")))
            .workers(WORKERS)
            .threadsPerWorker(threads)
            .lease(LEASE);
    String seed = System.getProperty(SEED);
    if (seed != null && !seed.isBlank()) {
      builder.seed(Long.parseLong(seed.trim()));
    }
    FaultRun run = builder.build();
    FaultReport report = run.run(server);
    Path reports = Path.of("target", "fault-reports");
    Files.createDirectories(reports);
    Files.writeString(
        reports.resolve(reportName + (threads > 1 ? "-" + threads + "threads" : "") + ".txt"),
        report.describe(),
        StandardCharsets.UTF_8);

    String context = "seed " + run.seed() + "\n" + report.describe();
    SoftAssertions softly = new SoftAssertions();
    softly.assertThat(report.workerErrors()).as(context).isEmpty();
    softly.assertThat(report.unexplainedOverlaps()).as(context).isZero();
    softly.assertThat(report.staleWritesAccepted()).as(context).isZero();
    softly.assertThat(report.repeatedTokens()).as(context).isZero();
    if (livenessPromised) {
      softly
          .assertThat(report.longestFreeAfterDeathMillis())
          .as(context)
          .isLessThanOrEqualTo(report.livenessBoundMillis());
    }
    softly.assertAll();
    return report;
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
    Matcher matcher = DURATION_TEXT.matcher(text.trim());
    assertThat(matcher.matches())
        .as(DURATION + " must be a number with ms, s, m or h: " + text)
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
