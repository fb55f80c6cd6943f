package io.latchkey.redis;

import io.latchkey.BackendUnavailableException;
import io.lettuce.core.ScriptOutputType;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Runs the scripts that grant something (a lock hold, a leased permit, semaphore permits) and, when
 * the URI asks for it ({@code waitReplicas}), makes each grant wait for that many replicas: {@code
 * WAIT replicas timeout} right after the script, on the same connection. A grant that too few
 * replicas acknowledged is undone and fails with a {@link BackendUnavailableException} that says
 * how many did.
 */
final class RedisGrants {
  private final RedisCommandConnection redis;
  private final ReplicaWait wait;
  private final String backend;

  /**
   * @param redis the connection
   * @param wait how many replicas must acknowledge a grant
   * @param backend the backend's description, for messages
   */
  RedisGrants(RedisCommandConnection redis, ReplicaWait wait, String backend) {
    this.redis = redis;
    this.wait = wait;
    this.backend = backend;
  }

  /**
   * Runs a granting script once.
   *
   * @param what names the resource for messages, e.g. {@code lock 'orders/42'}; called only then
   * @param granted tells from the reply whether the script granted
   * @param undo undoes the grant of a reply
   * @return the reply
   */
  <T> CompletableFuture<T> run(
      Supplier<String> what,
      Predicate<T> granted,
      Function<T, CompletionStage<?>> undo,
      RedisScript script,
      ScriptOutputType output,
      String[] keys,
      String... args) {
    if (!wait.enabled()) {
      return redis.run(script, output, keys, args);
    }
    return redis
        .<T>runAndWait(wait, granted, script, output, keys, args)
        .thenCompose(
            replicated -> {
              long acknowledged = replicated.acknowledged();
              if (acknowledged < 0 || acknowledged >= wait.replicas()) {
                return CompletableFuture.completedFuture(replicated.reply());
              }
              return undo.apply(replicated.reply())
                  .handle(
                      (undone, failure) -> {
                        throw new BackendUnavailableException(
                            backend
                                + ": only "
                                + acknowledged
                                + " of the "
                                + wait.replicas()
                                + " replicas required (waitReplicas) acknowledged the grant of "
                                + what.get()
                                + " within "
                                + wait.timeout().toMillis()
                                + " ms; "
                                + (failure == null
                                    ? "the grant was undone"
                                    : "undoing the grant failed too (" + failure + ")"),
                            failure);
                      });
            });
  }
}
