package io.latchkey.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * The Lua scripts of the backend, one per atomic operation. Each is the resource {@code
 * io/latchkey/redis/<name>.lua} with {@code lib.lua} (the record formats and shared functions) in
 * front, read once when this class loads. Each exists in two dialects that differ only in how they
 * publish wake-ups: PUBLISH, or SPUBLISH to shard channels (Redis Cluster 7 and later).
 *
 * <p>Protocol: a script runs by EVALSHA of its SHA-1. A server that does not know it (NOSCRIPT: it
 * restarted, failed over, or its script cache was flushed) gets the text by EVAL, which caches it
 * again. The script text is constant: lock names, owners and ids only ever travel as KEYS and ARGV.
 * Scripts read the time with {@code TIME}, so every expiry and deadline is by the Redis clock.
 */
enum RedisScript {
  LOCK_ACQUIRE("lock-acquire"),
  LOCK_RELEASE("lock-release"),
  LOCK_RELEASE_HAND_OVER("lock-release-hand-over"),
  LOCK_LEAVE_QUEUE("lock-leave-queue"),
  LOCK_FORCE_RELEASE("lock-force-release"),
  LOCK_EVICT("lock-evict"),
  LOCK_INSPECT("lock-inspect"),
  LOCK_REVOKE("lock-revoke"),
  RENEW("renew"),
  SEMAPHORE_ACQUIRE("semaphore-acquire"),
  SEMAPHORE_ADD("semaphore-add"),
  SEMAPHORE_SET("semaphore-set"),
  SEMAPHORE_DRAIN("semaphore-drain"),
  LEASED_SEMAPHORE_ACQUIRE("leased-semaphore-acquire"),
  LEASED_SEMAPHORE_RELEASE("leased-semaphore-release"),
  LEASED_SEMAPHORE_ADD("leased-semaphore-add"),
  LEASED_SEMAPHORE_AVAILABLE("leased-semaphore-available"),
  LEASED_SEMAPHORE_INSPECT("leased-semaphore-inspect"),
  LEASED_SEMAPHORE_DELETE("leased-semaphore-delete"),
  LEASED_SEMAPHORE_UPDATE_LEASE("leased-semaphore-update-lease"),
  LATCH_COUNT_DOWN("latch-count-down"),
  LATCH_DELETE("latch-delete"),
  FENCE_RAISE("fence-raise"),
  EPOCH("epoch"),
  PRESENCE("presence");

  // Dialect is a record of two strings, immutable, though Error Prone cannot prove it without an
  // @Immutable annotation.
  @SuppressWarnings("ImmutableEnumChecker")
  private final Dialect classic;

  @SuppressWarnings("ImmutableEnumChecker")
  private final Dialect sharded;

  RedisScript(String name) {
    String body = resource("lib") + resource(name);
    this.classic = new Dialect("local PUBLISH_COMMAND = 'PUBLISH'\n" + body);
    this.sharded = new Dialect("local PUBLISH_COMMAND = 'SPUBLISH'\n" + body);
  }

  /**
   * Runs the script once.
   *
   * @param redis the connection's commands
   * @param shardedPubSub whether wake-ups go out by SPUBLISH
   * @param output how to read the script's reply
   * @param keys the KEYS of the script
   * @param args the ARGV of the script
   * @return the reply
   */
  <T> CompletionStage<T> run(
      RedisClusterAsyncCommands<String, String> redis,
      boolean shardedPubSub,
      ScriptOutputType output,
      String[] keys,
      String... args) {
    Dialect dialect = shardedPubSub ? sharded : classic;
    CompletionStage<T> cached = redis.evalsha(dialect.sha(), output, keys, args);
    return cached.exceptionallyCompose(
        failure -> {
          Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
          if (cause instanceof RedisNoScriptException) {
            return redis.eval(dialect.source(), output, keys, args);
          }
          return CompletableFuture.failedFuture(cause);
        });
  }

  /** One dialect's text and its SHA-1. */
  private record Dialect(String source, String sha) {
    Dialect(String source) {
      this(source, sha1(source));
    }
  }

  private static String resource(String name) {
    String path = name + ".lua";
    try (InputStream in = RedisScript.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("script io/latchkey/redis/" + path + " is missing");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read script io/latchkey/redis/" + path, e);
    }
  }

  private static String sha1(String text) {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-1");
      return HexFormat.of().formatHex(digest.digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-1", e);
    }
  }
}
