package io.latchkey.zookeeper;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.zookeeper.KeeperException;
import org.jspecify.annotations.Nullable;

/**
 * Nodes that a call which failed on the connection may have left in this client's session, deleted
 * once the connection is back.
 *
 * <p>Why. A grant's node is ephemeral and a session outlives a connection blip, so a node that
 * nobody knows of holds its lock or permit until the client ends: the engine's rule for a call that
 * failed without an answer ("what it may have granted runs out with its lease") does not hold on
 * ZooKeeper by itself, whose lease is the session. Such a node is left by a grant the server
 * applied whose answer was lost, or by a release whose delete never reached the server. Its store
 * hands it here, and its delete is sent when the connection is back, again after every further
 * blip, until it is answered (a node gone with its session answers NONODE, which ends it too).
 * Deleting at a version leaves a node that changed since alone (its owner came back to it).
 */
final class StrandedNodes {
  private final ZooKeeperCalls calls;
  private final ConnectionGate gate;

  /**
   * A stranded node's delete: the version it is sent at (-1: any), and a stage that completes once
   * it is answered.
   */
  private record Pending(int version, CompletableFuture<Void> answered) {}

  /** Each stranded node's delete. */
  private final Map<String, Pending> stranded = new ConcurrentHashMap<>();

  StrandedNodes(ZooKeeperCalls calls, ConnectionGate gate) {
    this.calls = calls;
    this.gate = gate;
  }

  /**
   * Passes a call's answer on as it is; if it failed on the connection, the node is deleted once
   * the connection is back.
   *
   * @param call a call that may have left {@code path} behind when it failed
   * @param path the node
   * @param version the version to delete it at, or -1 for any
   * @param answered told the delete's answer (OK, NONODE or BADVERSION), if it gets one
   * @return {@code call}'s answer
   */
  <T> CompletableFuture<T> onConnectionLoss(
      CompletableFuture<T> call,
      String path,
      int version,
      Consumer<KeeperException.Code> answered) {
    return call.whenComplete(
        (answer, failure) -> {
          if (failure == null || !ConnectionGate.isConnectionLoss(failure)) {
            return;
          }
          Pending pending = new Pending(version, new CompletableFuture<>());
          if (stranded.putIfAbsent(path, pending) == null) {
            gate.whenBack(() -> delete(path, pending, answered));
          }
        });
  }

  /**
   * For a caller that would make a node at the same path again (a waiting acquisition keeps its
   * permit id): the stranded node's delete must be answered first, or it could delete the new node.
   *
   * @param path a node
   * @return a stage that completes once the pending delete of the node is answered, or null if none
   *     is pending
   */
  @Nullable CompletableFuture<Void> deleting(String path) {
    Pending pending = stranded.get(path);
    return pending == null ? null : pending.answered();
  }

  // The delete routes its own outcome: answered, or sent again after the next blip.
  @SuppressWarnings("FutureReturnValueIgnored")
  private void delete(String path, Pending pending, Consumer<KeeperException.Code> answered) {
    calls
        .delete(path, pending.version())
        .whenComplete(
            (code, failure) -> {
              if (failure != null && ConnectionGate.isConnectionLoss(failure)) {
                gate.whenBack(() -> delete(path, pending, answered));
                return;
              }
              // Answered, or refused for good.
              stranded.remove(path, pending);
              pending.answered().complete(null);
              if (code != null) {
                answered.accept(code);
              }
            });
  }
}
