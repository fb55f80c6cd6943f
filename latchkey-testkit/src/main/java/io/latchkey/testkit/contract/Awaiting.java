package io.latchkey.testkit.contract;

import java.time.Duration;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;

/**
 * The kit's waiting conditions. Conditions are polled on the test's own thread, because the locks
 * under test belong to the thread that takes them: a condition that acquires on a poller thread
 * would leave a lock held by a thread that no longer exists.
 */
final class Awaiting {
  /**
   * How long any condition of the kit may take to come true: generous, for slow machines and real
   * servers. It bounds waiting for correct behaviour; it never measures speed.
   */
  static final Duration PATIENCE = Duration.ofSeconds(10);

  private Awaiting() {}

  /**
   * @return a condition that must come true within {@link #PATIENCE}
   */
  static ConditionFactory eventually() {
    return Awaitility.await()
        .pollInSameThread()
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(20))
        .atMost(PATIENCE);
  }

  /**
   * @param period how long the condition must hold without a break
   * @return a condition that must stay true for {@code period}
   */
  static ConditionFactory throughout(Duration period) {
    return Awaitility.await()
        .pollInSameThread()
        .pollInterval(Duration.ofMillis(50))
        .during(period)
        .atMost(period.plus(PATIENCE));
  }
}
