package io.latchkey.redis;

import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.ResourceType;
import io.lettuce.core.ScriptOutputType;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Leased semaphores in Redis: a settings hash (total permits and a fencing counter, without expiry)
 * and a hash of granted permits, each with its lease deadline, token and client, that expires with
 * the latest lease.
 */
final class RedisLeasedSemaphoreStore implements LeasedSemaphoreStore {
  private final RedisCommandConnection redis;
  private final RedisGrants grants;
  private final RedisKeys keys;
  private final String clientId;

  /**
   * @param clientId this client's id, written with each permit it is granted (for inspection)
   */
  RedisLeasedSemaphoreStore(
      RedisCommandConnection redis, RedisGrants grants, RedisKeys keys, String clientId) {
    this.redis = redis;
    this.grants = grants;
    this.keys = keys;
    this.clientId = clientId;
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
    return tryAcquireAll(name, List.of(permitId), leaseMillis);
  }

  @Override
  public CompletionStage<AcquireResult> tryAcquireAll(
      String name, List<String> permitIds, long leaseMillis) {
    String[] scriptKeys = {keys.leasedSemaphore(name), keys.leasedPermits(name)};
    String[] args = new String[permitIds.size() + 2];
    args[0] = Long.toString(leaseMillis);
    args[1] = clientId;
    for (int i = 0; i < permitIds.size(); i++) {
      args[i + 2] = permitIds.get(i);
    }
    return grants
        .<String>run(
            () -> "leased semaphore '" + name + "'",
            RedisReplies::granted,
            granted -> releaseAll(name, permitIds),
            RedisScript.LEASED_SEMAPHORE_ACQUIRE,
            ScriptOutputType.VALUE,
            scriptKeys,
            args)
        .thenApply(RedisReplies::acquireResult);
  }

  @Override
  public CompletionStage<Boolean> release(String name, String permitId) {
    return releaseAll(name, List.of(permitId));
  }

  @Override
  public CompletionStage<Boolean> releaseAll(String name, List<String> permitIds) {
    String[] scriptKeys = {
      keys.leasedPermits(name), keys.wakeups(ResourceType.LEASED_SEMAPHORE, name)
    };
    return redis
        .<Long>run(
            RedisScript.LEASED_SEMAPHORE_RELEASE,
            ScriptOutputType.INTEGER,
            scriptKeys,
            permitIds.toArray(String[]::new))
        .thenApply(wereHeld -> wereHeld == 1);
  }

  @Override
  public CompletionStage<Boolean> updateLease(String name, String permitId, long leaseMillis) {
    String[] scriptKeys = {keys.leasedPermits(name)};
    return redis
        .<Long>run(
            RedisScript.LEASED_SEMAPHORE_UPDATE_LEASE,
            ScriptOutputType.INTEGER,
            scriptKeys,
            permitId,
            Long.toString(leaseMillis))
        .thenApply(wasHeld -> wasHeld == 1);
  }

  @Override
  public CompletionStage<Integer> availablePermits(String name) {
    String[] scriptKeys = {keys.leasedSemaphore(name), keys.leasedPermits(name)};
    return redis
        .<Long>run(RedisScript.LEASED_SEMAPHORE_AVAILABLE, ScriptOutputType.INTEGER, scriptKeys)
        .thenApply(Math::toIntExact);
  }

  @Override
  public CompletionStage<Boolean> delete(String name) {
    String[] scriptKeys = {keys.leasedSemaphore(name), keys.leasedPermits(name)};
    return redis
        .<Long>run(RedisScript.LEASED_SEMAPHORE_DELETE, ScriptOutputType.INTEGER, scriptKeys)
        .thenApply(existed -> existed == 1);
  }

  @Override
  public CompletionStage<Boolean> exists(String name) {
    return redis.execute(commands -> commands.hexists(keys.leasedSemaphore(name), "total"));
  }
}
