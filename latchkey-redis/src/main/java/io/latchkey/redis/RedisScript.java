package io.latchkey.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
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
 * front, read once when this class loads.
 *
 * <p>Protocol: a script runs by EVALSHA of its SHA-1. A server that does not know it (NOSCRIPT: it
 * restarted, failed over, or its script cache was flushed) gets the text by EVAL, which caches it
 * again. The script text is constant: lock names, owners and ids only ever travel as KEYS and ARGV.
 * Scripts read the time with {@code TIME}, so every expiry and deadline is by the Redis clock.
 */
enum RedisScript {
  LOCK_ACQUIRE("lock-acquire"),
  LOCK_RELEASE("lock-release"),
  LOCK_LEAVE_QUEUE("lock-leave-queue"),
  LOCK_FORCE_RELEASE("lock-force-release"),
  LOCK_EVICT("lock-evict"),
  LOCK_INSPECT("lock-inspect"),
  RENEW("renew"),
  SEMAPHORE_ACQUIRE("semaphore-acquire"),
  SEMAPHORE_ADD("semaphore-add"),
  LEASED_SEMAPHORE_ACQUIRE("leased-semaphore-acquire"),
  LEASED_SEMAPHORE_RELEASE("leased-semaphore-release"),
  LEASED_SEMAPHORE_ADD("leased-semaphore-add"),
  LEASED_SEMAPHORE_AVAILABLE("leased-semaphore-available"),
  LATCH_COUNT_DOWN("latch-count-down"),
  PRESENCE("presence");

  private final String source;
  private final String sha;

  RedisScript(String name) {
    this.source = resource("lib") + resource(name);
    this.sha = sha1(source);
  }

  /**
   * Runs the script once.
   *
   * @param redis the connection's commands
   * @param output how to read the script's reply
   * @param keys the KEYS of the script
   * @param args the ARGV of the script
   * @return the reply
   */
  <T> CompletionStage<T> run(
      RedisAsyncCommands<String, String> redis,
      ScriptOutputType output,
      String[] keys,
      String... args) {
    CompletionStage<T> cached = redis.evalsha(sha, output, keys, args);
    return cached.exceptionallyCompose(
        failure -> {
          Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
          if (cause instanceof RedisNoScriptException) {
            return redis.eval(source, output, keys, args);
          }
          return CompletableFuture.failedFuture(cause);
        });
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
