package io.latchkey.redis;

import io.latchkey.BackendUnavailableException;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Runs the scripts that grant something (a lock hold, a leased permit, semaphore permits) and, when
 * the URI asks for it ({@code waitReplicas}), makes each grant wait for that many replicas. A grant
 * that too few replicas acknowledged is undone and fails with a {@link BackendUnavailableException}
 * that says how many did.
 *
 * <p>How the wait works. {@code WAIT} blocks the connection it is sent on until the replicas have
 * acknowledged every write <em>that connection</em> made; sent on the shared command connection it
 * would hold up every unrelated release and renewal behind it (eight grants waiting 100 ms each
 * stall the backend for most of a second). So grant scripts run on the shared connection, in order
 * with the releases that may compensate them, and the waiting happens on a connection of its own:
 * once a grant's reply is back, the grant is in the master's replication stream, and a write made
 * afterwards on the waiting connection (a short-lived barrier key in the grant's hash slot) comes
 * after it in that stream. {@code WAIT} after the barrier write therefore covers the grant too.
 * Grants that come back while a barrier is out share the next one (one barrier per hash slot in a
 * cluster, one in all elsewhere), so the waiting connection holds at most one {@code WAIT} per
 * group at a time, however many grants wait. {@code WAITAOF} would not help: it too applies to the
 * connection's own writes, and it waits for fsync rather than replicas.
 *
 * <p>Who undoes a grant. The engine bounds each call by its operation timeout and, when a call
 * fails without a clear answer, releases a thread-owned lock grant it cannot rule out. So this
 * class undoes a grant only while the caller still waits for the answer (before the bound of {@link
 * RedisCommandConnection#giveUpDeadline()}): its undo then comes before the failure it reports, and
 * before anything the caller does next. Past that bound it leaves the grant to the engine, as it
 * would a grant whose answer came too late; undoing it as well could release a grant that the same
 * owner made again meanwhile. (A {@code waitTimeout} at or above the operation timeout is refused
 * at connect, since every wait would then end past the bound.)
 */
final class RedisGrants {
  private final RedisCommandConnection redis;
  private final @Nullable RedisCommandConnection waiting;
  private final RedisKeys keys;
  private final ReplicaWait wait;
  private final String backend;
  // Guarded by this: per barrier group, the grants waiting for the next barrier.
  private final Map<Integer, BarrierGroup> groups = new HashMap<>();

  /**
   * @param redis the shared command connection, on which the scripts run
   * @param waiting a connection of its own for the barriers and their {@code WAIT}; null when
   *     {@code wait} is not enabled
   * @param keys the key layout
   * @param wait how many replicas must acknowledge a grant
   * @param backend the backend's description, for messages
   */
  RedisGrants(
      RedisCommandConnection redis,
      @Nullable RedisCommandConnection waiting,
      RedisKeys keys,
      ReplicaWait wait,
      String backend) {
    if (wait.enabled() && waiting == null) {
      throw new IllegalArgumentException("waiting for replicas needs a connection of its own");
    }
    this.redis = redis;
    this.waiting = waiting;
    this.keys = keys;
    this.wait = wait;
    this.backend = backend;
  }

  /**
   * @return true if every grant waits for replicas (a grant made inside another operation, such as
   *     a release that hands the lock over, would not)
   */
  boolean waitsForReplicas() {
    return wait.enabled();
  }

  /**
   * Runs a granting script once.
   *
   * @param what names the resource for messages, e.g. {@code lock 'orders/42'}; called only then
   * @param granted tells from the reply whether the script granted
   * @param undo undoes the grant of a reply
   * @return the reply
   */
  @SuppressWarnings("FutureReturnValueIgnored") // the nested stage is composed right after
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
    long deadline = redis.giveUpDeadline();
    return redis
        .<T>run(script, output, keys, args)
        .thenCompose(
            reply ->
                granted.test(reply)
                    ? replicated(keys[0])
                        .handle(
                            (acknowledged, failure) ->
                                acknowledged != null && acknowledged >= wait.replicas()
                                    ? CompletableFuture.completedFuture(reply)
                                    : undone(what, undo, reply, acknowledged, failure, deadline))
                        .thenCompose(answer -> answer)
                    : CompletableFuture.completedFuture(reply));
  }

  private <T> CompletableFuture<T> undone(
      Supplier<String> what,
      Function<T, CompletionStage<?>> undo,
      T reply,
      @Nullable Long acknowledged,
      @Nullable Throwable failure,
      long deadline) {
    String problem =
        (acknowledged != null
                ? "only " + acknowledged + " of the " + wait.replicas()
                : "it is unknown how many of the " + wait.replicas())
            + " replicas required (waitReplicas) acknowledged the grant of "
            + what.get()
            + " within "
            + wait.timeout().toMillis()
            + " ms"
            + (failure == null ? "" : " (" + unwrap(failure) + ")");
    if (System.nanoTime() - deadline >= 0) {
      return CompletableFuture.failedFuture(
          new BackendUnavailableException(
              backend
                  + ": "
                  + problem
                  + "; the caller had given up by then, so the grant was left as an uncertain"
                  + " one (the engine releases it, or its lease runs out)",
              failure));
    }
    return undo.apply(reply)
        .<T>handle(
            (undoneReply, undoFailure) -> {
              throw new BackendUnavailableException(
                  backend
                      + ": "
                      + problem
                      + "; "
                      + (undoFailure == null
                          ? "the grant was undone"
                          : "undoing the grant failed too (" + unwrap(undoFailure) + ")"),
                  undoFailure != null ? undoFailure : failure);
            })
        .toCompletableFuture();
  }

  /**
   * @return how many replicas acknowledged a barrier written after the grant to {@code key}
   */
  private CompletableFuture<Long> replicated(String key) {
    RedisCommandConnection connection = requireWaiting();
    CompletableFuture<Long> acknowledged = new CompletableFuture<>();
    int id = connection.barrierGroup(key);
    boolean send;
    synchronized (this) {
      BarrierGroup group = groups.computeIfAbsent(id, any -> new BarrierGroup(key));
      group.next.add(acknowledged);
      send = !group.out;
      group.out = true;
    }
    if (send) {
      sendBarrier(connection, id);
    }
    return acknowledged;
  }

  /** Sends the barrier for the grants waiting in a group, and the next one when it is back. */
  @SuppressWarnings("FutureReturnValueIgnored") // the handler completes every waiting grant itself
  private void sendBarrier(RedisCommandConnection connection, int id) {
    List<CompletableFuture<Long>> batch;
    String key;
    synchronized (this) {
      BarrierGroup group = Objects.requireNonNull(groups.get(id), "a sent group stays until done");
      batch = group.next;
      group.next = new ArrayList<>();
      key = group.key;
    }
    connection
        .replicationBarrier(keys.replicationBarrier(key), wait)
        .whenComplete(
            (acknowledged, failure) -> {
              boolean again;
              synchronized (this) {
                BarrierGroup group =
                    Objects.requireNonNull(groups.get(id), "a sent group stays until done");
                again = !group.next.isEmpty();
                if (!again) {
                  groups.remove(id);
                }
              }
              for (CompletableFuture<Long> grant : batch) {
                if (failure == null) {
                  grant.complete(acknowledged);
                } else {
                  grant.completeExceptionally(failure);
                }
              }
              if (again) {
                sendBarrier(connection, id);
              }
            });
  }

  private static Throwable unwrap(Throwable failure) {
    return failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause()
        : failure;
  }

  private RedisCommandConnection requireWaiting() {
    RedisCommandConnection connection = waiting;
    if (connection == null) {
      throw new IllegalStateException("not waiting for replicas");
    }
    return connection;
  }

  /**
   * The grants of one barrier group: those waiting for the next barrier, and whether one is out.
   */
  private static final class BarrierGroup {
    /** A key of the group, whose hash tag the barrier key takes. */
    final String key;

    List<CompletableFuture<Long>> next = new ArrayList<>();
    boolean out;

    BarrierGroup(String key) {
      this.key = key;
    }
  }
}
