package io.latchkey.redis;

import io.latchkey.ClientInfo;
import io.latchkey.HolderInfo;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.ResourceType;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** Lock records in Redis: each operation is one script call (see {@link RedisScript}). */
final class RedisLockStore implements LockStore {
  /**
   * Locks inspected per script call when listing, so that no call blocks Redis for long; in a
   * cluster, every call inspects locks of one hash slot.
   */
  private static final int INSPECT_BATCH = 500;

  private final RedisCommandConnection redis;
  private final RedisGrants grants;
  private final RedisKeys keys;
  private final String clientId;

  RedisLockStore(
      RedisCommandConnection redis, RedisGrants grants, RedisKeys keys, String clientId) {
    this.redis = redis;
    this.grants = grants;
    this.keys = keys;
    this.clientId = clientId;
  }

  @Override
  public CompletionStage<AcquireResult> tryAcquire(LockRequest request) {
    String name = request.name();
    return grants
        .<String>run(
            () -> "lock '" + name + "'",
            RedisReplies::granted,
            granted -> release(name, request.owner(), request.mode()),
            RedisScript.LOCK_ACQUIRE,
            ScriptOutputType.VALUE,
            keys.lockAcquireKeys(name),
            request.owner(),
            mode(request.mode()),
            Long.toString(request.leaseMillis()),
            request.fair() ? "1" : "0",
            Long.toString(request.queueKeepAliveMillis()),
            clientId)
        .thenApply(RedisReplies::acquireResult);
  }

  @Override
  public CompletionStage<ReleaseResult> release(String name, String owner, LockMode mode) {
    return redis
        .<Long>run(
            RedisScript.LOCK_RELEASE,
            ScriptOutputType.INTEGER,
            keys.lockQueueKeys(name),
            owner,
            mode(mode))
        .thenApply(
            remaining ->
                remaining < 0
                    ? ReleaseResult.NOT_HELD
                    : ReleaseResult.released(Math.toIntExact(remaining)));
  }

  @Override
  public CompletionStage<Void> leaveQueue(String name, String owner) {
    return redis
        .<Long>run(
            RedisScript.LOCK_LEAVE_QUEUE, ScriptOutputType.INTEGER, keys.lockQueueKeys(name), owner)
        .thenApply(wasQueued -> null);
  }

  @Override
  public CompletionStage<Boolean> evict(String name, String owner) {
    return redis
        .<Long>run(
            RedisScript.LOCK_EVICT, ScriptOutputType.INTEGER, keys.lockQueueKeys(name), owner)
        .thenApply(held -> held == 1);
  }

  @Override
  public CompletionStage<List<ClientInfo>> clients() {
    return RedisPresence.list(redis, keys);
  }

  @Override
  public CompletionStage<Boolean> forceRelease(String name) {
    String[] scriptKeys = {
      keys.lock(name), keys.lockQueue(name), keys.wakeups(ResourceType.LOCK, name)
    };
    return redis
        .<Long>run(RedisScript.LOCK_FORCE_RELEASE, ScriptOutputType.INTEGER, scriptKeys)
        .thenApply(held -> held == 1);
  }

  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    return inspectAll(List.of(name)).thenApply(found -> found.stream().findFirst());
  }

  @Override
  public CompletionStage<List<LockInfo>> list() {
    return redis
        .scan(keys.lockScanPattern())
        .thenCompose(
            found -> {
              TreeSet<String> names = new TreeSet<>();
              for (String key : found) {
                keys.lockName(key).ifPresent(names::add);
              }
              List<CompletableFuture<List<LockInfo>>> batches = new ArrayList<>();
              for (List<String> group : redis.bySlot(List.copyOf(names), keys::lock)) {
                for (int from = 0; from < group.size(); from += INSPECT_BATCH) {
                  batches.add(
                      inspectAll(
                          group.subList(from, Math.min(group.size(), from + INSPECT_BATCH))));
                }
              }
              return CompletableFuture.allOf(batches.toArray(CompletableFuture<?>[]::new))
                  .thenApply(
                      done -> {
                        List<LockInfo> held = new ArrayList<>();
                        batches.forEach(batch -> held.addAll(batch.join()));
                        held.sort(Comparator.comparing(LockInfo::name));
                        return held;
                      });
            });
  }

  /** The held locks among {@code names}, in the same order. */
  private CompletableFuture<List<LockInfo>> inspectAll(List<String> names) {
    String[] scriptKeys = new String[names.size() * 3];
    for (int i = 0; i < names.size(); i++) {
      scriptKeys[3 * i] = keys.lock(names.get(i));
      scriptKeys[3 * i + 1] = keys.lockQueue(names.get(i));
      scriptKeys[3 * i + 2] = keys.lockQueueDeadlines(names.get(i));
    }
    return redis
        .<List<?>>run(RedisScript.LOCK_INSPECT, ScriptOutputType.MULTI, scriptKeys)
        .thenApply(
            reply -> {
              List<LockInfo> held = new ArrayList<>();
              for (int i = 0; i < names.size(); i++) {
                List<?> info = RedisReplies.array(reply.get(i));
                if (info.size() > 1) {
                  held.add(lockInfo(names.get(i), info));
                }
              }
              return held;
            });
  }

  /** Reads {@code {queued, then per holding mode: owner, client, mode, holds, ms left, token}}. */
  private static LockInfo lockInfo(String name, List<?> info) {
    List<HolderInfo> holders = new ArrayList<>();
    for (int i = 1; i + 5 < info.size(); i += 6) {
      holders.add(
          new HolderInfo(
              RedisReplies.text(info.get(i)),
              RedisReplies.text(info.get(i + 1)),
              RedisReplies.text(info.get(i + 2)).equals("x") ? LockMode.EXCLUSIVE : LockMode.SHARED,
              Math.toIntExact(RedisReplies.number(info.get(i + 3))),
              Duration.ofMillis(RedisReplies.number(info.get(i + 4))),
              RedisReplies.number(info.get(i + 5))));
    }
    return new LockInfo(name, holders, Math.toIntExact(RedisReplies.number(info.get(0))));
  }

  private static String mode(LockMode mode) {
    return mode == LockMode.EXCLUSIVE ? "x" : "s";
  }
}
