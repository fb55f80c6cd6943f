package io.latchkey.testkit;

import io.latchkey.LatchkeyObserver;
import io.latchkey.Primitive;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;

/**
 * Counts what one client's watchdog reports (renewals, failed renewals, lost leases), for fault
 * tests that must see a renewal happen, fail or report a loss. Pass it as the client's {@link
 * io.latchkey.LatchkeyOptions.Builder#observer observer}. Thread-safe.
 */
public final class WatchdogTally implements LatchkeyObserver {
  private static final Duration WAIT = Duration.ofSeconds(30);

  private final AtomicInteger renewed = new AtomicInteger();
  private final AtomicInteger failed = new AtomicInteger();
  private final AtomicInteger lost = new AtomicInteger();

  @Override
  public void renewed(Primitive primitive, String backend, int leases) {
    renewed.incrementAndGet();
  }

  @Override
  public void renewalFailed(Primitive primitive, String backend, int leases) {
    failed.incrementAndGet();
  }

  @Override
  public void leaseLost(Primitive primitive, String backend) {
    lost.incrementAndGet();
  }

  /**
   * @return how many renewal rounds confirmed leases so far
   */
  public int renewed() {
    return renewed.get();
  }

  /**
   * @return how many renewal rounds failed so far
   */
  public int failed() {
    return failed.get();
  }

  /**
   * @return how many leases were reported lost so far
   */
  public int lost() {
    return lost.get();
  }

  /** Waits (at most 30 s) until the watchdog renewed at least once more than when called. */
  public void awaitNextRenewal() {
    awaitIncrease(renewed);
  }

  /** Waits (at most 30 s) until a renewal failed at least once more than when called. */
  public void awaitNextFailure() {
    awaitIncrease(failed);
  }

  private static void awaitIncrease(AtomicInteger counter) {
    int before = counter.get();
    Awaitility.await()
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(20))
        .until(() -> counter.get() > before);
  }
}
