package io.latchkey.redis;

import io.latchkey.LockMode;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HandOverResult;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.ResourceType;
import io.lettuce.core.ScriptOutputType;
import java.util.concurrent.CompletionStage;

/**
 * Lock records in Redis, the grant path: each operation is one script call (see {@link
 * RedisScript}). The operator's operations are in {@link RedisAdminStore}.
 */
final class RedisLockStore implements LockStore {
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
            granted ->
                release(
                    new GrantRef(
                        new HolderRef(ResourceType.LOCK, name, request.owner()),
                        RedisReplies.acquireResult(granted).fencingToken()),
                    request.mode()),
            RedisScript.LOCK_ACQUIRE,
            ScriptOutputType.VALUE,
            keys.lockAcquireKeys(name),
            request.owner(),
            mode(request.mode()),
            Long.toString(request.leaseMillis()),
            request.fair() ? "1" : "0",
            Long.toString(request.queueKeepAliveMillis()),
            clientId,
            Long.toString(request.handoffMillis()))
        .thenApply(RedisReplies::acquireResult);
  }

  @Override
  public CompletionStage<ReleaseResult> release(GrantRef grant, LockMode mode) {
    return redis
        .<Long>run(
            RedisScript.LOCK_RELEASE,
            ScriptOutputType.INTEGER,
            keys.lockQueueKeys(grant.name()),
            grant.holderId(),
            mode(mode),
            Long.toString(grant.fencingToken()))
        .thenApply(
            remaining ->
                remaining < 0
                    ? ReleaseResult.NOT_HELD
                    : ReleaseResult.released(Math.toIntExact(remaining)));
  }

  /** Every grant must wait for replicas when the URI asks for it, so a hand-over would not. */
  @Override
  public boolean handsOver() {
    return !grants.waitsForReplicas();
  }

  @Override
  public CompletionStage<HandOverResult> releaseAndHandOver(
      GrantRef grant, LockMode mode, LockRequest next) {
    if (!handsOver()) {
      return LockStore.super.releaseAndHandOver(grant, mode, next);
    }
    return redis
        .<String>run(
            RedisScript.LOCK_RELEASE_HAND_OVER,
            ScriptOutputType.VALUE,
            keys.lockAcquireKeys(grant.name()),
            grant.holderId(),
            mode(mode),
            Long.toString(grant.fencingToken()),
            next.owner(),
            mode(next.mode()),
            Long.toString(next.leaseMillis()),
            next.fair() ? "1" : "0",
            Long.toString(next.queueKeepAliveMillis()),
            clientId,
            Long.toString(next.handoffMillis()))
        .thenApply(RedisReplies::handOverResult);
  }

  @Override
  public CompletionStage<Void> leaveQueue(String name, String owner) {
    return redis
        .<Long>run(
            RedisScript.LOCK_LEAVE_QUEUE, ScriptOutputType.INTEGER, keys.lockQueueKeys(name), owner)
        .thenApply(wasQueued -> null);
  }

  @Override
  public CompletionStage<Integer> requestRevocation(String name) {
    return redis
        .<Long>run(
            RedisScript.LOCK_REVOKE,
            ScriptOutputType.INTEGER,
            new String[] {keys.lock(name)},
            keys.revocations(""),
            name)
        .thenApply(Math::toIntExact);
  }

  /**
   * @param message a revocation request as the script sends it: {@code <token> <owner> <name>}
   * @return the grant it names
   * @throws IllegalArgumentException if it names none
   */
  static GrantRef revocationRequest(String message) {
    int first = message.indexOf(' ');
    int second = first < 0 ? -1 : message.indexOf(' ', first + 1);
    if (second < 0) {
      throw new IllegalArgumentException("not a revocation request: '" + message + "'");
    }
    return new GrantRef(
        new HolderRef(
            ResourceType.LOCK, message.substring(second + 1), message.substring(first + 1, second)),
        Long.parseLong(message.substring(0, first)));
  }

  static String mode(LockMode mode) {
    return mode == LockMode.EXCLUSIVE ? "x" : "s";
  }
}
