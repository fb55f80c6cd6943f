package io.latchkey.quorum;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.latchkey.testkit.faults.FaultMode;
import io.latchkey.testkit.faults.FaultSuite;
import java.util.Locale;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The whole fault suite on a quorum of five redis-servers, for the lock modes a quorum offers
 * (watchdog and explicit leases; fair locks and leased semaphores are not offered), every fault
 * kind, {@code -Dlatchkey.faults.duration} per mode (default 2 minutes), a 2 s lease; {@link
 * FaultSuite} lists the other properties. Each report is written to {@code
 * target/fault-reports/quorum-MODE.txt}. Run with {@code mvn -B -pl latchkey-quorum -am verify
 * -Psoak -Dtest=RedisQuorumFaultSuiteTest -Dsurefire.failIfNoSpecifiedTests=false}.
 *
 * <p>The liveness bound is not asserted: a crashed member comes back empty and is quarantined for
 * the longest lease, a deliberate pause of the grants it takes part in.
 */
@Tag("slow")
class RedisQuorumFaultSuiteTest {

  @ParameterizedTest
  @EnumSource(
      value = FaultMode.class,
      names = {"WATCHDOG_LOCK", "EXPLICIT_LEASE_LOCK"})
  void everyFaultKind(FaultMode mode) throws Exception {
    assumeTrue(FaultSuite.selected(mode), mode + " is not in -D" + FaultSuite.MODES);
    try (RedisQuorum servers = RedisQuorum.start(5)) {
      FaultSuite.runAndCheck(
          mode,
          new QuorumServerControl(servers, ";maxLease=2s"),
          "quorum-" + mode.name().toLowerCase(Locale.ROOT),
          false);
    }
  }
}
