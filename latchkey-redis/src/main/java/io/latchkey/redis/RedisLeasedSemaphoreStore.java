package io.latchkey.redis;

import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.ResourceType;
import io.lettuce.core.ScriptOutputType;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Leased semaphores in Redis: a settings hash (total permits and a fencing counter, without expiry)
 * and a hash of granted permits, each with its lease deadline and token, that expires with the
 * latest lease.
 */
final class RedisLeasedSemaphoreStore implements LeasedSemaphoreStore {
  private final RedisCommandConnection redis;
  private final RedisGrants grants;
  private final RedisKeys keys;

  RedisLeasedSemaphoreStore(RedisCommandConnection redis, RedisGrants grants, RedisKeys keys) {
    this.redis = redis;
    this.grants = grants;
    this.keys = keys;
  }

  @Override
  public CompletionStage<Boolean> trySetPermits(String name, int permits) {
    return redis.execute(
        commands ->
            commands.hsetnx(keys.leasedSemaphore(name), "total", Integer.toString(permits)));
  }

  @Override
  public CompletionStage<Void> addPermits(String name, int delta) {
    String[] scriptKeys = {
      keys.leasedSemaphore(name), keys.wakeups(ResourceType.LEASED_SEMAPHORE, name)
    };
    return redis
        .<List<?>>run(
            RedisScript.LEASED_SEMAPHORE_ADD,
            ScriptOutputType.MULTI,
            scriptKeys,
            Integer.toString(delta))
        .thenApply(
            reply -> RedisSemaphoreStore.countChanged(reply, "leased semaphore", name, delta));
  }

  @Override
  public CompletionStage<AcquireResult> tryAcquire(String name, String permitId, long leaseMillis) {
    String[] scriptKeys = {keys.leasedSemaphore(name), keys.leasedPermits(name)};
    return grants
        .<String>run(
            () -> "leased semaphore '" + name + "'",
            RedisReplies::granted,
            granted -> release(name, permitId),
            RedisScript.LEASED_SEMAPHORE_ACQUIRE,
            ScriptOutputType.VALUE,
            scriptKeys,
            permitId,
            Long.toString(leaseMillis))
        .thenApply(RedisReplies::acquireResult);
  }

  @Override
  public CompletionStage<Boolean> release(String name, String permitId) {
    String[] scriptKeys = {
      keys.leasedPermits(name), keys.wakeups(ResourceType.LEASED_SEMAPHORE, name)
    };
    return redis
        .<Long>run(
            RedisScript.LEASED_SEMAPHORE_RELEASE, ScriptOutputType.INTEGER, scriptKeys, permitId)
        .thenApply(wasHeld -> wasHeld == 1);
  }

  @Override
  public CompletionStage<Integer> availablePermits(String name) {
    String[] scriptKeys = {keys.leasedSemaphore(name), keys.leasedPermits(name)};
    return redis
        .<Long>run(RedisScript.LEASED_SEMAPHORE_AVAILABLE, ScriptOutputType.INTEGER, scriptKeys)
        .thenApply(Math::toIntExact);
  }
}
