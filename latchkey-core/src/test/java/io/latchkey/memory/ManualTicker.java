package io.latchkey.memory;

import io.latchkey.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A clock that moves only when told. */
final class ManualTicker implements Ticker {
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

  @Override
  public long nanoTime() {
    return nanos.get();
  }

  void advance(Duration by) {
    nanos.addAndGet(by.toNanos());
  }
}
