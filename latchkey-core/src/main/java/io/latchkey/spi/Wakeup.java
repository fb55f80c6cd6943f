package io.latchkey.spi;

import org.jspecify.annotations.Nullable;

/**
 * A push from the backend that a resource may now be acquirable.
 *
 * @param slots how many waiters it can serve ({@link #ALL} for every waiter)
 * @param targetOwner if not null, only the waiter with this owner id should try (the head of a fair
 *     queue)
 */
public record Wakeup(int slots, @Nullable String targetOwner) {
  /** Slots meaning every waiter may try. */
  public static final int ALL = Integer.MAX_VALUE;

  /**
   * @param slots the number of waiters served
   * @return a wake-up for that many waiters
   */
  public static Wakeup of(int slots) {
    return new Wakeup(slots, null);
  }

  /**
   * @param owner the owner id of the queue head
   * @return a wake-up for that waiter only
   */
  public static Wakeup forOwner(String owner) {
    return new Wakeup(1, owner);
  }
}
