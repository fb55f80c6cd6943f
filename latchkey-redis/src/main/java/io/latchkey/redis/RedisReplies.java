package io.latchkey.redis;

import io.latchkey.spi.AcquireResult;
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

  /** Whether {@code {status, ...}} says granted. */
  static boolean granted(List<?> reply) {
    return number(reply.get(0)) == 1;
  }

  /** Reads {@code {status, token, holds, retryAfterMillis}}: 1 granted, 0 busy, 2 refused. */
  static AcquireResult acquireResult(List<?> reply) {
    if (granted(reply)) {
      return AcquireResult.granted(number(reply.get(1)), Math.toIntExact(number(reply.get(2))));
    }
    if (number(reply.get(0)) == 2) {
      return AcquireResult.upgradeRefused();
    }
    return AcquireResult.busy(number(reply.get(3)));
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
