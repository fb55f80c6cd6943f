package io.latchkey.redis;

import io.latchkey.spi.FenceStore;
import io.lettuce.core.ScriptOutputType;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * The growing numbers a quorum of independent Redis servers builds its fencing on
 * (docs/adr/0009-quorum-fencing.md): the lock's own fencing counter, raised by a script, and an
 * epoch record without expiry that a restart without data loses.
 */
final class RedisFenceStore implements FenceStore {
  private final RedisCommandConnection redis;
  private final RedisKeys keys;

  RedisFenceStore(RedisCommandConnection redis, RedisKeys keys) {
    this.redis = redis;
    this.keys = keys;
  }

  @Override
  public CompletionStage<Long> raiseLockFence(String name, long atLeast) {
    requireNotNegative("atLeast", atLeast);
    return redis.run(
        RedisScript.FENCE_RAISE,
        ScriptOutputType.INTEGER,
        new String[] {keys.lockFence(name)},
        Long.toString(atLeast));
  }

  @Override
  public CompletionStage<Epoch> epoch(long atLeast, long quarantineMillis) {
    requireNotNegative("atLeast", atLeast);
    requireNotNegative("quarantineMillis", quarantineMillis);
    return redis
        .<List<?>>run(
            RedisScript.EPOCH,
            ScriptOutputType.MULTI,
            keys.epochKeys(),
            Long.toString(atLeast),
            Long.toString(quarantineMillis))
        .thenApply(reply -> new Epoch((Long) reply.get(0), (Long) reply.get(1)));
  }

  private static void requireNotNegative(String what, long value) {
    if (value < 0) {
      throw new IllegalArgumentException(what + " must not be negative, was " + value);
    }
  }
}
