package io.latchkey.redis;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.latchkey.servers.RedisTestServer;
import io.latchkey.testkit.faults.FaultMode;
import io.latchkey.testkit.faults.FaultSuite;
import java.util.Locale;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The whole fault suite on a standalone Redis: every mode with every fault kind, for {@code
 * -Dlatchkey.faults.duration} per mode (default {@code 2m}), with a 2 s lease renewed every third;
 * {@link FaultSuite} lists the other properties (seed, modes, kinds). Each report is printed and
 * written to {@code target/fault-reports/MODE.txt}.
 *
 * <p>It asserts the targets: no unexplained overlap, no stale write accepted, no repeated token,
 * and the lock free for at most lease + renew interval after a holder died. Run with {@code mvn -B
 * -pl latchkey-redis -am verify -Psoak -Dtest=RedisFaultSuiteTest
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@Tag("slow")
class RedisFaultSuiteTest {

  @ParameterizedTest
  @EnumSource(FaultMode.class)
  void everyFaultKind(FaultMode mode) throws Exception {
    assumeTrue(FaultSuite.selected(mode), mode + " is not in -D" + FaultSuite.MODES);
    try (RedisTestServer redis = RedisTestServer.start()) {
      FaultSuite.runAndCheck(
          mode, new RedisServerControl(redis), mode.name().toLowerCase(Locale.ROOT), true);
    }
  }
}
