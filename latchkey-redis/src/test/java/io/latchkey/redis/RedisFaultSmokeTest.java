package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.servers.RedisTestServer;
import io.latchkey.testkit.faults.FaultKind;
import io.latchkey.testkit.faults.FaultMode;
import io.latchkey.testkit.faults.FaultReport;
import io.latchkey.testkit.faults.FaultRun;
import java.time.Duration;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * A short run of the fault suite in the default build, so that the harness cannot rot: explicit
 * leases, holders stopped past their lease and workers killed. It asserts only what latchkey
 * guarantees today; {@link RedisFaultSuiteTest} runs everything, for longer, with {@code -Psoak}.
 */
class RedisFaultSmokeTest {

  @Test
  void fencingRefusesStoppedHoldersAndTheLockOutlivesKilledOnes() throws Exception {
    try (RedisTestServer redis = RedisTestServer.start()) {
      FaultRun run =
          FaultRun.builder(FaultMode.EXPLICIT_LEASE_LOCK)
              .faults(EnumSet.of(FaultKind.PAUSE_HOLDER, FaultKind.KILL_WORKER))
              .duration(Duration.ofSeconds(20))
              .workers(3)
              .lease(Duration.ofSeconds(1))
              // Only the liveness bound uses it (explicit leases are not renewed): 1.5 s leaves
              // room for a loaded machine.
              .renewInterval(Duration.ofMillis(500))
              .build();
      FaultReport report = run.run(new RedisServerControl(redis));
      String seed = "seed " + run.seed() + "\n" + report.describe();

      assertThat(report.workerErrors()).as(seed).isEmpty();
      assertThat(report.grants()).as(seed).isGreaterThan(20);
      assertThat(report.faults().values().stream().mapToInt(Integer::intValue).sum())
          .as(seed)
          .isGreaterThanOrEqualTo(2);
      assertThat(report.staleWritesAccepted()).as(seed).isZero();
      assertThat(report.repeatedTokens()).as(seed).isZero();
      // A holder stopped inside the critical section past its lease comes back with an old token:
      // someone else has written meanwhile, so the fence refuses it, and it is the only excuse
      // for an overlap here.
      if (report.holdersHit().getOrDefault(FaultKind.PAUSE_HOLDER, 0) > 0) {
        assertThat(report.staleWritesRefused()).as(seed).isPositive();
      }
      assertThat(report.unexplainedOverlaps()).as(seed).isZero();
      assertThat(report.lostUpdates()).as(seed).isLessThanOrEqualTo(report.explainedOverlaps());
      if (report.explainedOverlaps() == 0) {
        assertThat(report.lostUpdates()).as(seed).isZero();
      }
      assertThat(report.longestFreeAfterDeathMillis())
          .as(seed)
          .isLessThanOrEqualTo(report.livenessBoundMillis());
    }
  }
}
