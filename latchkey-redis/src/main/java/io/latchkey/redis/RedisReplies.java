package io.latchkey.redis;

import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.HandOverResult;
import io.latchkey.spi.ReleaseResult;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Reads the replies of the scripts: Lua numbers arrive as {@link Long}, strings as String. */
final class RedisReplies {
  private RedisReplies() {}

  static long number(@Nullable Object reply) {
    if (reply instanceof Long number) {
      return number;
    }
    throw unexpected("an integer", reply);
  }

  static String text(@Nullable Object reply) {
    if (reply instanceof String text) {
      return text;
    }
    throw unexpected("a string", reply);
  }

  static List<?> array(@Nullable Object reply) {
    if (reply instanceof List<?> array) {
      return array;
    }
    throw unexpected("an array", reply);
  }

  /** Whether an acquire reply ({@code "status:token:holds:retryAfterMillis"}) says granted. */
  static boolean granted(String reply) {
    return reply.startsWith("1:");
  }

  /**
   * Reads an acquire reply, {@code "status:token:holds:retryAfterMillis"}: status 1 granted, 0
   * busy, 2 refused.
   */
  static AcquireResult acquireResult(String reply) {
    int token = reply.indexOf(':') + 1;
    int holds = reply.indexOf(':', token) + 1;
    int retryAfter = reply.indexOf(':', holds) + 1;
    if (token != 2 || holds == 0 || retryAfter == 0) {
      throw unexpected("status:token:holds:retryAfterMillis", reply);
    }
    try {
      return switch (reply.charAt(0)) {
        case '1' ->
            AcquireResult.granted(
                Long.parseLong(reply, token, holds - 1, 10),
                Integer.parseInt(reply, holds, retryAfter - 1, 10));
        case '2' -> AcquireResult.upgradeRefused();
        case '0' -> AcquireResult.busy(Long.parseLong(reply, retryAfter, reply.length(), 10));
        default -> throw unexpected("status 0, 1 or 2", reply);
      };
    } catch (NumberFormatException e) {
      throw unexpected("status:token:holds:retryAfterMillis", reply);
    }
  }

  /**
   * @param reply the hand-over script's reply: the remaining holds (-1: not held), and {@code
   *     /<acquire reply>} if the waiter's attempt was made
   */
  static HandOverResult handOverResult(String reply) {
    int slash = reply.indexOf('/');
    long remaining;
    try {
      remaining = Long.parseLong(reply, 0, slash < 0 ? reply.length() : slash, 10);
    } catch (NumberFormatException e) {
      throw unexpected("remainingHolds[/acquireReply]", reply);
    }
    ReleaseResult released =
        remaining < 0 ? ReleaseResult.NOT_HELD : ReleaseResult.released(Math.toIntExact(remaining));
    return new HandOverResult(
        released, slash < 0 ? null : acquireResult(reply.substring(slash + 1)));
  }

  private static IllegalStateException unexpected(String expected, @Nullable Object reply) {
    return new IllegalStateException(
        "a latchkey script replied "
            + (reply == null ? "nil" : reply.getClass().getSimpleName() + " " + reply)
            + " where "
            + expected
            + " was expected; is another program writing latchkey's keys?");
  }
}
