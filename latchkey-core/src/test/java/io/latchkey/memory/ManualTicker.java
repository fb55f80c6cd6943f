package io.latchkey.memory;

import io.latchkey.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock that moves only when told; it starts at one second. Shared by the memory server and the
 * engine (and {@code io.latchkey.internal.ManualScheduler}) in tests that drive time by hand.
 */
public final class ManualTicker implements Ticker {
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

  /** A clock at one second. */
  public ManualTicker() {}

  @Override
  public long nanoTime() {
    return nanos.get();
  }

  /**
   * Moves the clock forward.
   *
   * @param by how far; not negative
   */
  public void advance(Duration by) {
    if (by.isNegative()) {
      throw new IllegalArgumentException("a monotonic clock cannot go back: " + by);
    }
    nanos.addAndGet(by.toNanos());
  }
}
