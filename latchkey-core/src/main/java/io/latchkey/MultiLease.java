package io.latchkey;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * The grant of a {@link MultiLock}: one {@link Lease} per member. Closing it releases every member,
 * even when releasing one of them fails.
 */
public interface MultiLease extends AutoCloseable {
  /**
   * @return the members' leases, in the order they were acquired
   */
  List<Lease> leases();

  /**
   * @return true while every member's lease is valid
   */
  boolean isValid();

  /**
   * Releases every member in reverse order of acquisition.
   *
   * @throws LeaseLostException if any member's lease was lost (the others are still released;
   *     further failures are attached as suppressed exceptions)
   */
  void release();

  /**
   * Asynchronous {@link #release()}: releases every member at once.
   *
   * @return completes when every member is released, or exceptionally with the first failure (after
   *     all were tried)
   */
  CompletionStage<Void> releaseAsync();

  /** Same as {@link #release()}. */
  @Override
  void close();
}
