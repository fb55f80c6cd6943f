package io.latchkey.quorum;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.faults.FaultKind;
import io.latchkey.testkit.faults.FaultMode;
import io.latchkey.testkit.faults.FaultReport;
import io.latchkey.testkit.faults.FaultRun;
import java.time.Duration;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * A short run of the fault suite on a quorum of five redis-servers in the default build: explicit
 * leases, holders stopped past their lease, workers killed and members crashed (each comes back
 * empty and sits out its quarantine). {@link RedisQuorumFaultSuiteTest} runs every fault for longer
 * with {@code -Psoak}.
 */
class RedisQuorumFaultSmokeTest {

  @Test
  void fencingRefusesStoppedHoldersAndMemberCrashesBreakNothing() throws Exception {
    try (RedisQuorum servers = RedisQuorum.start(5)) {
      FaultRun run =
          FaultRun.builder(FaultMode.EXPLICIT_LEASE_LOCK)
              .faults(
                  EnumSet.of(FaultKind.PAUSE_HOLDER, FaultKind.KILL_WORKER, FaultKind.CRASH_SERVER))
              .duration(Duration.ofSeconds(20))
              .workers(3)
              .lease(Duration.ofSeconds(2))
              .renewInterval(Duration.ofMillis(700))
              // Five members to reach from cold worker JVMs on a loaded machine.
              .operationTimeout(Duration.ofMillis(1500))
              .build();
      FaultReport report = run.run(new QuorumServerControl(servers, ";maxLease=2s"));
      String seed = "seed " + run.seed() + "\n" + report.describe();

      assertThat(report.workerErrors()).as(seed).isEmpty();
      assertThat(report.grants()).as(seed).isGreaterThan(10);
      assertThat(report.staleWritesAccepted()).as(seed).isZero();
      assertThat(report.repeatedTokens()).as(seed).isZero();
      if (report.holdersHit().getOrDefault(FaultKind.PAUSE_HOLDER, 0) > 0) {
        assertThat(report.staleWritesRefused()).as(seed).isPositive();
      }
      assertThat(report.unexplainedOverlaps()).as(seed).isZero();
      assertThat(report.lostUpdates()).as(seed).isLessThanOrEqualTo(report.explainedOverlaps());
    }
  }
}
