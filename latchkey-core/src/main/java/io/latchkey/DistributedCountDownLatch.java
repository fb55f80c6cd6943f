package io.latchkey;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * A distributed count-down latch: set a count once, let any process count down, and wait until it
 * reaches zero. Unlike {@link java.util.concurrent.CountDownLatch} it can be set again once it has
 * reached zero.
 */
public interface DistributedCountDownLatch {
  /**
   * Returns the latch name.
   *
   * @return the latch name
   */
  String name();

  /**
   * Sets the count, unless the latch is still counting down.
   *
   * @param count the count, at least one
   * @return true if set; false if the latch is still counting down from an earlier set
   */
  boolean trySetCount(long count);

  /** Counts down by one; at zero every waiter wakes. Counting down at zero does nothing. */
  void countDown();

  /**
   * Asynchronous {@link #countDown()}.
   *
   * @return the count after counting down
   */
  CompletionStage<Long> countDownAsync();

  /**
   * Returns the current count.
   *
   * @return the current count (zero if never set or done)
   */
  long count();

  /**
   * Waits as long as it takes for the count to reach zero; returns at once for a latch that was
   * never set.
   *
   * @throws InterruptedException if interrupted while waiting
   */
  void await() throws InterruptedException;

  /**
   * Asynchronous {@link #await()}; cancelling the stage abandons the wait.
   *
   * @return completes when the count reached zero
   */
  CompletionStage<Void> awaitAsync();

  /**
   * Waits until the count reaches zero; returns at once for a latch that was never set.
   *
   * @param wait how long to wait at most
   * @return true if it reached zero, false if the wait ran out
   * @throws InterruptedException if interrupted while waiting
   */
  boolean await(Duration wait) throws InterruptedException;

  /**
   * Asynchronous {@link #await(Duration)}.
   *
   * @param wait how long to wait at most
   * @return true if the count reached zero in time
   */
  CompletionStage<Boolean> awaitAsync(Duration wait);

  /**
   * Deletes the latch, whatever its count: it is then as if it had reached zero, and every waiter
   * wakes and returns as from a latch that reached zero.
   *
   * @return true if the latch was counting down
   * @throws UnsupportedFeatureException without {@link Feature#DELETE_RECORDS}
   */
  boolean delete();

  /**
   * @return true if the latch is counting down (set, and not yet at zero or deleted): {@code
   *     count() > 0}
   */
  boolean isExists();
}
