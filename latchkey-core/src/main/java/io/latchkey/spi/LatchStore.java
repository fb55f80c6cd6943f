package io.latchkey.spi;

import java.util.concurrent.CompletionStage;

/** Count-down latches: per name, a count that only goes down, removed when it reaches zero. */
public interface LatchStore {
  /**
   * @param name the latch name
   * @param count the count, positive
   * @return true if the latch was at zero (or absent) and is now set
   */
  CompletionStage<Boolean> trySetCount(String name, long count);

  /**
   * Counts down by one; at zero removes the latch and wakes all waiters.
   *
   * @param name the latch name
   * @return the count after the call
   */
  CompletionStage<Long> countDown(String name);

  /**
   * @param name the latch name
   * @return the current count
   */
  CompletionStage<Long> count(String name);
}
