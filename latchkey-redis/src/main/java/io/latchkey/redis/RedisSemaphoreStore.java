package io.latchkey.redis;

import io.latchkey.spi.ResourceType;
import io.latchkey.spi.SemaphoreStore;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Counting semaphores in Redis: a string of available permits per name, without expiry. Setting,
 * reading, deleting and checking for the record are single commands; taking and adding are scripts.
 * Adding refuses, with an {@link IllegalArgumentException}, a change that would take the count out
 * of the range of an int.
 */
final class RedisSemaphoreStore implements SemaphoreStore {
  /** The first element of the add script's reply when only an existing record was to change. */
  private static final long NO_RECORD = 2;

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
    return add(name, delta, false)
        .thenApply(reply -> countChanged(reply, "semaphore", name, delta));
  }

  @Override
  public CompletionStage<Boolean> addPermitsIfExists(String name, int delta) {
    return add(name, delta, true)
        .thenApply(
            reply -> {
              if (RedisReplies.number(reply.get(0)) == NO_RECORD) {
                return false;
              }
              countChanged(reply, "semaphore", name, delta);
              return true;
            });
  }

  /**
   * Runs the add script, whose reply {@link #countChanged} reads (unless it is {@link #NO_RECORD}).
   */
  private CompletableFuture<List<?>> add(String name, int delta, boolean onlyIfExists) {
    String[] scriptKeys = {keys.semaphore(name), keys.wakeups(ResourceType.SEMAPHORE, name)};
    return redis.run(
        RedisScript.SEMAPHORE_ADD,
        ScriptOutputType.MULTI,
        scriptKeys,
        Integer.toString(delta),
        onlyIfExists ? "1" : "0");
  }

  @Override
  public CompletionStage<Boolean> delete(String name) {
    return redis.execute(commands -> commands.del(keys.semaphore(name))).thenApply(n -> n > 0);
  }

  @Override
  public CompletionStage<Boolean> exists(String name) {
    return redis.execute(commands -> commands.exists(keys.semaphore(name))).thenApply(n -> n > 0);
  }

  /**
   * Reads the reply of an add script, {@code {changed, count before}}: a count is an int, and the
   * script refuses (atomically, changing nothing) a change that would take it out of that range.
   *
   * @throws IllegalArgumentException if the script refused the change
   */
  static @Nullable Void countChanged(List<?> reply, String kind, String name, int delta) {
    if (RedisReplies.number(reply.get(0)) == 1) {
      return null;
    }
    throw new IllegalArgumentException(
        "adding "
            + delta
            + " permits to the "
            + RedisReplies.number(reply.get(1))
            + " of "
            + kind
            + " '"
            + name
            + "' would take its count out of the range of an int ["
            + Integer.MIN_VALUE
            + ", "
            + Integer.MAX_VALUE
            + "]; nothing was changed");
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

  @Override
  public CompletionStage<Void> setPermits(String name, int permits) {
    String[] scriptKeys = {keys.semaphore(name), keys.wakeups(ResourceType.SEMAPHORE, name)};
    return redis
        .<Long>run(
            RedisScript.SEMAPHORE_SET,
            ScriptOutputType.INTEGER,
            scriptKeys,
            Integer.toString(permits))
        .thenApply(set -> null);
  }

  /** A grant like {@link #tryAcquire}: with {@code waitReplicas}, what was taken is given back. */
  @Override
  public CompletionStage<Integer> drainPermits(String name) {
    String[] scriptKeys = {keys.semaphore(name)};
    return grants
        .<Long>run(
            () -> "semaphore '" + name + "'",
            taken -> taken > 0,
            taken -> addPermits(name, Math.toIntExact(taken)),
            RedisScript.SEMAPHORE_DRAIN,
            ScriptOutputType.INTEGER,
            scriptKeys)
        .thenApply(Math::toIntExact);
  }
}
