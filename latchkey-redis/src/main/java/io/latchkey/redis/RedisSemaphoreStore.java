package io.latchkey.redis;

import io.latchkey.spi.ResourceType;
import io.latchkey.spi.SemaphoreStore;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import java.util.concurrent.CompletionStage;

/**
 * Counting semaphores in Redis: a string of available permits per name, without expiry. Setting and
 * reading are single commands; taking and adding are scripts.
 */
final class RedisSemaphoreStore implements SemaphoreStore {
  private final RedisCommandConnection redis;
  private final RedisGrants grants;
  private final RedisKeys keys;

  RedisSemaphoreStore(RedisCommandConnection redis, RedisGrants grants, RedisKeys keys) {
    this.redis = redis;
    this.grants = grants;
    this.keys = keys;
  }

  @Override
  public CompletionStage<Boolean> trySetPermits(String name, int permits) {
    return redis
        .execute(
            commands ->
                commands.set(keys.semaphore(name), Integer.toString(permits), SetArgs.Builder.nx()))
        .thenApply("OK"::equals);
  }

  @Override
  public CompletionStage<Void> addPermits(String name, int delta) {
    String[] scriptKeys = {keys.semaphore(name), keys.wakeups(ResourceType.SEMAPHORE, name)};
    return redis
        .<Long>run(
            RedisScript.SEMAPHORE_ADD,
            ScriptOutputType.INTEGER,
            scriptKeys,
            Integer.toString(delta))
        .thenApply(done -> null);
  }

  @Override
  public CompletionStage<Boolean> tryAcquire(String name, int permits) {
    String[] scriptKeys = {keys.semaphore(name)};
    return grants
        .<Long>run(
            () -> "semaphore '" + name + "'",
            taken -> taken == 1,
            taken -> addPermits(name, permits),
            RedisScript.SEMAPHORE_ACQUIRE,
            ScriptOutputType.INTEGER,
            scriptKeys,
            Integer.toString(permits))
        .thenApply(taken -> taken == 1);
  }

  @Override
  public CompletionStage<Integer> availablePermits(String name) {
    return redis
        .execute(commands -> commands.get(keys.semaphore(name)))
        .thenApply(value -> value == null ? 0 : Integer.parseInt(value));
  }
}
