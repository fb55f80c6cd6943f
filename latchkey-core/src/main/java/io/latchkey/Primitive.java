package io.latchkey;

import java.util.Locale;

/** The kinds of synchronizer latchkey hands out, as metrics and observers name them. */
public enum Primitive {
  /** {@link Latchkey#lock(String)}. */
  LOCK,
  /** {@link Latchkey#fairLock(String)}. */
  FAIR_LOCK,
  /** {@link Latchkey#mutex(String)}. */
  MUTEX,
  /** The read side of {@link Latchkey#readWriteLock(String)}. */
  READ_LOCK,
  /** The write side of {@link Latchkey#readWriteLock(String)}. */
  WRITE_LOCK,
  /** {@link Latchkey#semaphore(String)}. */
  SEMAPHORE,
  /** {@link Latchkey#leasedSemaphore(String)}. */
  LEASED_SEMAPHORE,
  /** {@link Latchkey#countDownLatch(String)} (its waits). */
  COUNT_DOWN_LATCH,
  /** {@link Latchkey#joinElection(String)} (the lock each participant competes for). */
  LEADER_ELECTION;

  private final String tag = name().toLowerCase(Locale.ROOT);

  /**
   * @return the name in lower case, e.g. {@code fair_lock}: a metric tag value
   */
  public String tagValue() {
    return tag;
  }
}
