package io.latchkey.spi;

import io.latchkey.Feature;
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

  /**
   * Removes the latch whatever its count and, if it was counting down, wakes all waiters (as at
   * zero). Needs {@link Feature#DELETE_RECORDS}. (Not named {@code delete}: one class may implement
   * this and {@link SemaphoreStore}, whose {@code delete} means another record.)
   *
   * @param name the latch name
   * @return true if it was counting down
   */
  default CompletionStage<Boolean> deleteLatch(String name) {
    return Refusals.refuse(Feature.DELETE_RECORDS, this);
  }
}
