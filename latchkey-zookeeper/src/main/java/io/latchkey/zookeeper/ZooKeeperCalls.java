package io.latchkey.zookeeper;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.api.transaction.TransactionOp;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * Curator's background calls as stages. Every call is sent once, in the background; its answer
 * arrives on {@code executor}. The backend gives a direct executor, so that answers complete their
 * stages on ZooKeeper's event thread, as watches do: what runs after them (the stores' next
 * background call, the engine's bookkeeping) is short and never blocks, and must stay so, since
 * that thread also delivers watches and session events. A call that Curator refuses at once fails
 * the stage.
 */
final class ZooKeeperCalls {
  /** Sends one background call with the callback and executor it is given. */
  @FunctionalInterface
  interface Call {
    void send(BackgroundCallback callback, Executor executor) throws Exception;
  }

  /** Makes the operations of a multi-op. */
  @FunctionalInterface
  interface Operations {
    java.util.List<CuratorOp> make(TransactionOp op) throws Exception;
  }

  private final CuratorFramework client;
  private final Executor executor;
  private final Runnable disconnected;

  /**
   * @param disconnected told when a watch hears ZooKeeper's disconnection event, before the watch
   *     completes (on ZooKeeper's event thread; short, never blocking)
   */
  ZooKeeperCalls(CuratorFramework client, Executor executor, Runnable disconnected) {
    this.client = client;
    this.executor = executor;
    this.disconnected = disconnected;
  }

  CuratorFramework client() {
    return client;
  }

  /**
   * @param call the call
   * @return its event, whatever its result code
   */
  CompletableFuture<CuratorEvent> send(Call call) {
    CompletableFuture<CuratorEvent> answer = new CompletableFuture<>();
    try {
      call.send((framework, event) -> answer.complete(event), executor);
    } catch (Exception refused) {
      answer.completeExceptionally(refused);
    }
    return answer;
  }

  /**
   * @param event an answer
   * @return its result code
   */
  static KeeperException.Code code(CuratorEvent event) {
    return KeeperException.Code.get(event.getResultCode());
  }

  /**
   * @param event an answer whose code latchkey has no meaning for
   * @return the failure it stands for: the outcome of the call is unknown
   */
  static KeeperException failure(CuratorEvent event) {
    return KeeperException.create(code(event), event.getPath());
  }

  /**
   * A node's data and stat, as read.
   *
   * @param data the data, only ever decoded (never compared or hashed as a record component)
   * @param stat the stat
   */
  @SuppressWarnings("ArrayRecordComponent")
  record Read(byte[] data, Stat stat) {}

  /**
   * A one-time watch that is in place.
   *
   * @param fired completes when the watched node (or its children) changes, or at once if it is
   *     gone already, or when the connection changes (disconnected, expired): worth a new attempt
   * @param changed completes only when the node (or its children) changed or is gone: a wake-up
   */
  record Watch(CompletableFuture<Void> fired, CompletableFuture<Void> changed) {
    /** Completes both: the node is gone or changed. */
    void nodeChanged() {
      changed.complete(null);
      fired.complete(null);
    }

    /** What the watcher hears: a state change of the connection wakes the attempt, not a waiter. */
    void heard(org.apache.zookeeper.WatchedEvent event) {
      if (event.getType() != org.apache.zookeeper.Watcher.Event.EventType.None) {
        changed.complete(null);
      }
      fired.complete(null);
    }
  }

  /**
   * @param path a node
   * @return its data and stat, or null if it does not exist
   */
  CompletableFuture<@Nullable Read> read(String path) {
    return send((callback, on) -> client.getData().inBackground(callback, on).forPath(path))
        .thenApply(
            event -> {
              KeeperException.Code code = code(event);
              if (code == KeeperException.Code.NONODE) {
                return null;
              }
              if (code != KeeperException.Code.OK) {
                throw new java.util.concurrent.CompletionException(failure(event));
              }
              byte[] data = event.getData();
              return new Read(data == null ? new byte[0] : data, event.getStat());
            });
  }

  /**
   * A node's children and its stat, read together.
   *
   * @param children the children's names
   * @param version the node's data version, or -1 if it does not exist
   * @param childrenZxid the zxid of the last change of its children (its {@code pzxid}), or -1 if
   *     it does not exist: a listing whose {@code childrenZxid} is at least a child's creation zxid
   *     was read after that creation
   */
  record Listing(java.util.List<String> children, int version, long childrenZxid) {}

  /**
   * @param path a node
   * @return its children's names, empty if it does not exist
   */
  CompletableFuture<java.util.List<String>> children(String path) {
    return list(path).thenApply(Listing::children);
  }

  /**
   * @param path a node
   * @return its children's names and its data version, from one read
   */
  CompletableFuture<Listing> list(String path) {
    return send((callback, on) -> client.getChildren().inBackground(callback, on).forPath(path))
        .thenApply(
            event -> {
              KeeperException.Code code = code(event);
              if (code == KeeperException.Code.NONODE) {
                return new Listing(java.util.List.of(), -1, -1);
              }
              if (code != KeeperException.Code.OK) {
                throw new java.util.concurrent.CompletionException(failure(event));
              }
              Stat stat = event.getStat();
              return new Listing(
                  java.util.List.copyOf(event.getChildren()),
                  stat == null ? -1 : stat.getVersion(),
                  stat == null ? -1 : stat.getPzxid());
            });
  }

  /**
   * @param path a node
   * @return its stat, or null if it does not exist
   */
  CompletableFuture<@Nullable Stat> stat(String path) {
    return send((callback, on) -> client.checkExists().inBackground(callback, on).forPath(path))
        .thenApply(
            event -> {
              KeeperException.Code code = code(event);
              if (code == KeeperException.Code.NONODE) {
                return null;
              }
              if (code != KeeperException.Code.OK) {
                throw new java.util.concurrent.CompletionException(failure(event));
              }
              return event.getStat();
            });
  }

  /**
   * Brings this client's server up to date with the leader for a path, so that a read after it sees
   * every write the ensemble applied before.
   *
   * @param path a node (which need not exist)
   * @return completes once synced
   */
  CompletableFuture<Void> sync(String path) {
    return send((callback, on) -> client.sync().inBackground(callback, on).forPath(path))
        .thenApply(
            event -> {
              KeeperException.Code code = code(event);
              if (code != KeeperException.Code.OK && code != KeeperException.Code.NONODE) {
                throw new java.util.concurrent.CompletionException(failure(event));
              }
              return null;
            });
  }

  /**
   * Sets a one-time watch on a node: it fires when the node changes or goes.
   *
   * @param path the node to watch
   * @return the watch, once set
   */
  CompletableFuture<Watch> watch(String path, boolean children) {
    return children ? watchChildren(path) : watch(path);
  }

  CompletableFuture<Watch> watch(String path) {
    Watch watch = new Watch(new CompletableFuture<>(), new CompletableFuture<>());
    return watchNode(path, watch, watcher(watch)).thenApply(set -> watch);
  }

  /** What a watch hears: a disconnection is told first, then the watch completes. */
  private org.apache.zookeeper.Watcher watcher(Watch watch) {
    return event -> {
      if (event.getType() == org.apache.zookeeper.Watcher.Event.EventType.None
          && event.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.Disconnected) {
        disconnected.run();
      }
      watch.heard(event);
    };
  }

  /**
   * Sets a watch on a node that has no children (an ephemeral node cannot have any) that fires only
   * when the node goes (or the connection changes): a watch on its children, which ZooKeeper fires
   * when the node is deleted and never for a change of its data. A watch on the node itself would
   * fire at every change of its data too (its owner's claim, a re-entry), and cost a request to set
   * again. For a waiter whose turn does not depend on the watched node's data.
   *
   * @param path the node to watch
   * @return the watch, once set
   */
  CompletableFuture<Watch> watchUntilGone(String path) {
    return watchChildren(path);
  }

  /** Sets a watcher on a node for a watch; a node gone already completes the watch at once. */
  private CompletableFuture<Void> watchNode(
      String path, Watch watch, org.apache.zookeeper.Watcher watcher) {
    return send((callback, on) ->
            client.checkExists().usingWatcher(watcher).inBackground(callback, on).forPath(path))
        .thenApply(
            event -> {
              KeeperException.Code code = code(event);
              if (code == KeeperException.Code.NONODE || event.getStat() == null) {
                watch.nodeChanged();
              } else if (code != KeeperException.Code.OK) {
                throw new java.util.concurrent.CompletionException(failure(event));
              }
              return null;
            });
  }

  /**
   * Sets a one-time watch on a node's children.
   *
   * @param path the parent
   * @return the watch, once set: it fires when a child comes or goes
   */
  CompletableFuture<Watch> watchChildren(String path) {
    Watch watch = new Watch(new CompletableFuture<>(), new CompletableFuture<>());
    return send((callback, on) ->
            client
                .getChildren()
                .usingWatcher(watcher(watch))
                .inBackground(callback, on)
                .forPath(path))
        .thenApply(
            event -> {
              KeeperException.Code code = code(event);
              if (code == KeeperException.Code.NONODE) {
                watch.nodeChanged();
              } else if (code != KeeperException.Code.OK) {
                throw new java.util.concurrent.CompletionException(failure(event));
              }
              return watch;
            });
  }

  /**
   * Deletes a node if its version is {@code version} (-1: any).
   *
   * @return OK, NONODE or BADVERSION; other codes fail the stage
   */
  CompletableFuture<KeeperException.Code> delete(String path, int version) {
    return send((callback, on) ->
            client.delete().withVersion(version).inBackground(callback, on).forPath(path))
        .thenApply(
            event -> {
              KeeperException.Code code = code(event);
              if (code != KeeperException.Code.OK
                  && code != KeeperException.Code.NONODE
                  && code != KeeperException.Code.BADVERSION) {
                throw new java.util.concurrent.CompletionException(failure(event));
              }
              return code;
            });
  }

  /**
   * Writes a node's data if its version is {@code version} (-1: any).
   *
   * @return OK, NONODE or BADVERSION; other codes fail the stage
   */
  CompletableFuture<KeeperException.Code> write(String path, byte[] data, int version) {
    return send((callback, on) ->
            client.setData().withVersion(version).inBackground(callback, on).forPath(path, data))
        .thenApply(
            event -> {
              KeeperException.Code code = code(event);
              if (code != KeeperException.Code.OK
                  && code != KeeperException.Code.NONODE
                  && code != KeeperException.Code.BADVERSION) {
                throw new java.util.concurrent.CompletionException(failure(event));
              }
              return code;
            });
  }

  /**
   * Writes a node's data whatever its version and answers its new stat.
   *
   * @return the stat after the write, or null if the node does not exist
   */
  CompletableFuture<@Nullable Stat> touch(String path, byte[] data) {
    return send((callback, on) -> client.setData().inBackground(callback, on).forPath(path, data))
        .thenApply(
            event -> {
              KeeperException.Code code = code(event);
              if (code == KeeperException.Code.NONODE) {
                return null;
              }
              if (code != KeeperException.Code.OK) {
                throw new java.util.concurrent.CompletionException(failure(event));
              }
              return event.getStat();
            });
  }

  /**
   * What a multi-op answered: the results of its operations, in order, if it was applied; else the
   * code of the operation that was refused, and nothing was applied.
   *
   * @param code OK, BADVERSION, NONODE or NODEEXISTS
   * @param results each operation's result (paths without the namespace), empty unless OK
   */
  record Transaction(KeeperException.Code code, java.util.List<CuratorTransactionResult> results) {
    boolean ok() {
      return code == KeeperException.Code.OK;
    }
  }

  /**
   * Applies operations in one multi-op, all or none, as one write (one zxid).
   *
   * @param ops makes the operations from Curator's builder
   * @return the answer: OK, or the refused operation's BADVERSION, NONODE or NODEEXISTS; other
   *     codes fail the stage
   */
  CompletableFuture<Transaction> transaction(Operations ops) {
    return send((callback, on) ->
            client
                .transaction()
                .inBackground(callback, on)
                .forOperations(ops.make(client.transactionOp())))
        .thenApply(
            event -> {
              KeeperException.Code code = code(event);
              return switch (code) {
                case OK -> new Transaction(code, java.util.List.copyOf(event.getOpResults()));
                case BADVERSION, NONODE, NODEEXISTS -> new Transaction(code, java.util.List.of());
                default -> throw new java.util.concurrent.CompletionException(failure(event));
              };
            });
  }

  /** What a create answered: the created path and its stat, or the code of a refusal. */
  record Created(KeeperException.Code code, @Nullable String path, @Nullable Stat stat) {
    boolean ok() {
      return code == KeeperException.Code.OK;
    }
  }

  /**
   * How often a create is sent again when a parent was missing: an empty parent container can be
   * removed by the server between Curator's creation of the parents and its create of the node.
   */
  private static final int CREATES_FOR_MISSING_PARENTS = 5;

  /**
   * Creates a node, and its missing parents as containers (which the server removes once empty).
   * Curator makes missing parents and sends the create again once; but a parent it found, or made,
   * is itself an empty container (say the directory of all locks when no lock is held) that the
   * server's container manager may remove before the child's create arrives, and Curator then
   * answers NONODE. A NONODE answer created nothing, so the create is sent again, a few times.
   *
   * @param mode how the node lives
   * @return the answer: OK or NODEEXISTS; other codes fail the stage
   */
  CompletableFuture<Created> create(
      String path, byte[] data, org.apache.zookeeper.CreateMode mode) {
    return create(path, data, mode, 1);
  }

  private CompletableFuture<Created> create(
      String path, byte[] data, org.apache.zookeeper.CreateMode mode, int attempt) {
    return send((callback, on) ->
            client
                .create()
                .creatingParentContainersIfNeeded()
                .withMode(mode)
                .inBackground(callback, on)
                .forPath(path, data))
        .thenCompose(
            event -> {
              KeeperException.Code code = code(event);
              if (code == KeeperException.Code.NONODE && attempt < CREATES_FOR_MISSING_PARENTS) {
                return create(path, data, mode, attempt + 1);
              }
              if (code == KeeperException.Code.NODEEXISTS) {
                return CompletableFuture.completedFuture(new Created(code, null, null));
              }
              if (code != KeeperException.Code.OK) {
                return CompletableFuture.failedFuture(failure(event));
              }
              return CompletableFuture.completedFuture(
                  new Created(code, event.getName(), event.getStat()));
            });
  }
}
