package io.latchkey.redis;

import io.latchkey.spi.LatchStore;
import io.latchkey.spi.ResourceType;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import java.util.concurrent.CompletionStage;

/**
 * Count-down latches in Redis: a string count per name, deleted when it reaches zero (so an absent
 * key is a latch at zero). Setting and reading are single commands; counting down and deleting are
 * scripts.
 */
final class RedisLatchStore implements LatchStore {
  private final RedisCommandConnection redis;
  private final RedisKeys keys;

  RedisLatchStore(RedisCommandConnection redis, RedisKeys keys) {
    this.redis = redis;
    this.keys = keys;
  }

  @Override
  public CompletionStage<Boolean> trySetCount(String name, long count) {
    return redis
        .execute(
            commands -> commands.set(keys.latch(name), Long.toString(count), SetArgs.Builder.nx()))
        .thenApply("OK"::equals);
  }

  @Override
  public CompletionStage<Long> countDown(String name) {
    String[] scriptKeys = {keys.latch(name), keys.wakeups(ResourceType.COUNT_DOWN_LATCH, name)};
    return redis.run(RedisScript.LATCH_COUNT_DOWN, ScriptOutputType.INTEGER, scriptKeys);
  }

  @Override
  public CompletionStage<Long> count(String name) {
    return redis
        .execute(commands -> commands.get(keys.latch(name)))
        .thenApply(value -> value == null ? 0L : Long.parseLong(value));
  }

  @Override
  public CompletionStage<Boolean> deleteLatch(String name) {
    String[] scriptKeys = {keys.latch(name), keys.wakeups(ResourceType.COUNT_DOWN_LATCH, name)};
    return redis
        .<Long>run(RedisScript.LATCH_DELETE, ScriptOutputType.INTEGER, scriptKeys)
        .thenApply(counting -> counting == 1);
  }
}
