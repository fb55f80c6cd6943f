package io.latchkey.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisReadOnlyException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The one connection that carries the backend's commands — to a server, a Sentinel-managed master
 * or a whole Redis Cluster — replaced by a new one when it drops.
 *
 * <p>Commands are sent at most once. Lettuce's own reconnection re-sends the commands that were in
 * flight when a connection dropped, and a lock script run twice is wrong (a release run twice frees
 * a re-entered lock its owner still holds). So the client is built without auto-reconnect: a
 * command in flight on a dropped connection fails, the engine treats its outcome as unknown, and
 * the next command opens a new connection (one attempt at a time, shared by every command that
 * waits for it; they go out on it in the order they were given, so that an engine's compensating
 * release cannot overtake the acquire that follows it). A command that waits for a new connection
 * and whose caller has given up meanwhile is never sent: when the connection comes, commands whose
 * reply was cancelled or failed, and commands older than the give-up bound, fail instead of going
 * out. The engine gives up on a call after its operation timeout and does not cancel what it gave
 * up on, so this class keeps its own bound: a little shorter than the operation timeout, counted
 * from when the command was given (a moment after the engine started its clock), so that it passes
 * before the engine's. Without it a renewal that the engine had reported failed (and whose lease it
 * had reported lost) would go out on the next connection and revive the lease. The check and the
 * claim to send are one atomic step on the reply, so a give-up either comes first and the command
 * stays unsent, or comes after it was handed to the connection. A command that fails without an
 * answer from the server (a timeout, a dropped connection, a node of a cluster that went away)
 * retires its connection, which may be half-open; so does a READONLY reply, which means that a
 * fail-over demoted the node (a new connection asks the sentinels for the new master). A new
 * cluster connection first reloads the cluster's topology.
 *
 * <p>Scripts run in the pub/sub dialect of the deployment: their wake-ups go out by SPUBLISH to
 * shard channels on a Redis Cluster of version 7 or later, by PUBLISH everywhere else.
 */
final class RedisCommandConnection implements AutoCloseable {
  private static final int SCAN_COUNT = 1000;

  /** How long a replication barrier's key lives: it only has to be written. */
  private static final long BARRIER_LIFETIME = 1000;

  /** How much earlier than the operation timeout a waiting command is given up. */
  private static final Duration GIVE_UP_MARGIN = Duration.ofMillis(100);

  private final Supplier<CompletableFuture<Link>> connector;
  private final long giveUpNanos;
  private final boolean cluster;
  private final boolean shardedPubSub;
  private volatile Link current;
  // Guarded by this: the commands waiting for the connection being opened (in the order given),
  // and the flags.
  private final List<WaitingCommand> waiting = new ArrayList<>();
  private boolean connecting;
  private boolean currentClosed;
  private boolean closed;

  private RedisCommandConnection(
      Supplier<CompletableFuture<Link>> connector,
      Duration operationTimeout,
      Link first,
      boolean cluster,
      boolean shardedPubSub) {
    this.connector = connector;
    this.giveUpNanos =
        operationTimeout
            .minus(
                GIVE_UP_MARGIN.compareTo(operationTimeout.dividedBy(10)) < 0
                    ? GIVE_UP_MARGIN
                    : operationTimeout.dividedBy(10))
            .toNanos();
    this.current = first;
    this.cluster = cluster;
    this.shardedPubSub = shardedPubSub;
  }

  /**
   * Connects to a server, or through the sentinels to the master that {@code uri} names, and checks
   * that the server runs a Redis that latchkey supports.
   *
   * @param client a client built without auto-reconnect
   * @param uri where to connect
   * @param operationTimeout how long callers wait for a command; one that waits for a connection
   *     longer than about that is given up
   * @return completes with the connection, or fails if the server cannot be reached or runs a Redis
   *     older than {@link RedisVersion#MINIMUM}; the client's own timeouts bound it only loosely (a
   *     sentinel that never answers holds it for a minute), so callers bound it themselves
   */
  static CompletableFuture<RedisCommandConnection> standalone(
      RedisClient client, RedisURI uri, Duration operationTimeout) {
    Supplier<CompletableFuture<Link>> connector =
        () ->
            client
                .connectAsync(StringCodec.UTF8, uri)
                .<Link>thenApply(ServerLink::new)
                .toCompletableFuture();
    return connector
        .get()
        .thenCompose(
            first ->
                checkedVersion(first, "the Redis server")
                    .thenApply(
                        version ->
                            new RedisCommandConnection(
                                connector, operationTimeout, first, false, false)));
  }

  /**
   * Connects to a Redis Cluster through its seeds, checks that it runs a Redis that latchkey
   * supports, and learns whether it has sharded pub/sub (Redis 7 or later).
   *
   * @param client a client built without auto-reconnect, on the seeds of the cluster
   * @param operationTimeout how long callers wait for a command; one that waits for a connection
   *     longer than about that is given up
   * @return completes with the connection, or fails if no seed can be reached or the cluster runs a
   *     Redis older than {@link RedisVersion#MINIMUM}
   */
  static CompletableFuture<RedisCommandConnection> cluster(
      RedisClusterClient client, Duration operationTimeout) {
    // Lettuce connects a cluster client asynchronously only once it has loaded the topology.
    return client
        .refreshPartitionsAsync()
        .thenCompose(loaded -> client.connectAsync(StringCodec.UTF8))
        .<Link>thenApply(ClusterLink::new)
        .toCompletableFuture()
        .thenCompose(
            first ->
                checkedVersion(first, "the Redis Cluster")
                    .thenApply(
                        version ->
                            new RedisCommandConnection(
                                () ->
                                    client
                                        .refreshPartitionsAsync()
                                        .thenCompose(
                                            refreshed -> client.connectAsync(StringCodec.UTF8))
                                        .<Link>thenApply(ClusterLink::new)
                                        .toCompletableFuture(),
                                operationTimeout,
                                first,
                                true,
                                version.isAtLeast(7, 0))));
  }

  /** Reads the server's version on a new connection, and closes the connection if it is too old. */
  private static CompletableFuture<RedisVersion> checkedVersion(Link link, String server) {
    return link.commands()
        .info("server")
        .toCompletableFuture()
        .thenApply(info -> RedisVersion.supported(info, server))
        .whenComplete(
            (version, failure) -> {
              if (failure != null) {
                var unused = link.connection().closeAsync(); // nothing to wait for
              }
            });
  }

  /**
   * @return whether wake-ups travel on shard channels (SSUBSCRIBE, SPUBLISH)
   */
  boolean shardedPubSub() {
    return shardedPubSub;
  }

  /**
   * Runs a script once.
   *
   * @param script the script
   * @param output how to read its reply
   * @param keys its KEYS, all in one hash slot
   * @param args its ARGV
   * @return the reply
   */
  <T> CompletableFuture<T> run(
      RedisScript script, ScriptOutputType output, String[] keys, String... args) {
    return execute(commands -> script.run(commands, shardedPubSub, output, keys, args));
  }

  /**
   * Writes {@code barrierKey} and then waits, with {@code WAIT} on the same connection, until the
   * replicas have acknowledged that write: they then also have every write that the server had
   * applied before it (the replication stream is in the order of execution), whichever connection
   * made it. Use it on a connection of its own: {@code WAIT} blocks the connection while it waits.
   *
   * @param barrierKey a key in the slot of the writes to wait for (in a cluster, on their master)
   * @param wait how many replicas to wait for, and how long
   * @return how many replicas acknowledged
   */
  CompletableFuture<Long> replicationBarrier(String barrierKey, ReplicaWait wait) {
    return executeOn(
        link ->
            link.node(barrierKey)
                .thenCompose(
                    node ->
                        node.set(barrierKey, "", SetArgs.Builder.px(BARRIER_LIFETIME))
                            .thenCompose(
                                written ->
                                    node.waitForReplication(
                                        wait.replicas(), wait.timeout().toMillis()))));
  }

  /**
   * @return the {@link System#nanoTime()} after which the caller of a command given now has given
   *     up on it: a little before its operation timeout runs out
   */
  long giveUpDeadline() {
    return System.nanoTime() + giveUpNanos;
  }

  /**
   * @return the same number for two keys exactly when one {@link #replicationBarrier} may serve
   *     writes to both: their hash slot in a cluster, 0 elsewhere
   */
  int barrierGroup(String key) {
    return cluster ? SlotHash.getSlot(key) : 0;
  }

  /**
   * Sends a command, over a new connection if the current one has dropped. Commands that wait for a
   * new connection go out on it in the order in which they were given. In a cluster each command
   * goes to the master of its key's slot.
   *
   * @param command sends the command on the given commands and returns its reply
   * @return the reply
   */
  <T> CompletableFuture<T> execute(
      Function<RedisClusterAsyncCommands<String, String>, ? extends CompletionStage<T>> command) {
    return executeOn(link -> command.apply(link.commands()));
  }

  // Futures left unread on purpose: connected() takes every outcome of the connection attempt.
  @SuppressWarnings("FutureReturnValueIgnored")
  private <T> CompletableFuture<T> executeOn(Function<Link, ? extends CompletionStage<T>> command) {
    Link open = current;
    if (open.isOpen()) {
      return send(open, command);
    }
    WaitingReply<T> reply = new WaitingReply<>(giveUpDeadline());
    synchronized (this) {
      if (closed) {
        reply.completeExceptionally(new IllegalStateException("the Redis backend is closed"));
      } else if (current.isOpen()) {
        return send(current, command);
      } else {
        waiting.add(
            new WaitingCommand(
                link -> {
                  if (reply.claimToSend()) {
                    relay(send(link, command), reply);
                  }
                },
                reply::completeExceptionally));
        if (!connecting) {
          connecting = true;
          closeCurrent();
          connector.get().whenComplete(this::connected);
        }
      }
    }
    return reply;
  }

  // Futures left unread on purpose: a connection opened too late is closed in the background.
  @SuppressWarnings("FutureReturnValueIgnored")
  private void connected(@Nullable Link link, @Nullable Throwable failure) {
    List<WaitingCommand> waited;
    synchronized (this) {
      connecting = false;
      waited = List.copyOf(waiting);
      waiting.clear();
      if (link != null && !closed) {
        // Sent before the connection becomes current, so that no later command overtakes them.
        waited.forEach(command -> command.send().accept(link));
        current = link;
        currentClosed = false;
        return;
      }
    }
    if (link != null) {
      link.connection().closeAsync();
    }
    Throwable cause =
        failure != null ? failure : new IllegalStateException("the Redis backend is closed");
    waited.forEach(command -> command.fail().accept(cause));
  }

  // Futures left unread on purpose: the handler relays the outcome itself.
  @SuppressWarnings("FutureReturnValueIgnored")
  private static <T> void relay(CompletableFuture<T> from, CompletableFuture<T> to) {
    from.whenComplete(
        (value, failure) -> {
          if (failure == null) {
            to.complete(value);
          } else {
            to.completeExceptionally(failure);
          }
        });
  }

  /**
   * Splits items into groups whose keys share a hash slot, so that one script may touch all keys of
   * a group: in a cluster, one group per slot; elsewhere, one group of everything.
   *
   * @param items the items
   * @param key the key of an item
   * @return the groups, each in the order of {@code items}
   */
  <T> Collection<List<T>> bySlot(List<T> items, Function<T, String> key) {
    if (!cluster) {
      return items.isEmpty() ? List.of() : List.of(items);
    }
    Map<Integer, List<T>> groups = new LinkedHashMap<>();
    for (T item : items) {
      groups
          .computeIfAbsent(SlotHash.getSlot(key.apply(item)), slot -> new ArrayList<>())
          .add(item);
    }
    return groups.values();
  }

  /**
   * Collects every key matching a pattern, by SCAN (many short calls, never a blocking KEYS); in a
   * cluster, on every master.
   *
   * @param pattern a glob pattern
   * @return the keys; a key may appear twice if the keyspace was resized meanwhile
   */
  CompletableFuture<List<String>> scan(String pattern) {
    ScanArgs args = ScanArgs.Builder.matches(pattern).limit(SCAN_COUNT);
    return executeOn(
        link ->
            link.masters()
                .thenCompose(
                    masters -> {
                      List<CompletableFuture<List<String>>> scans = new ArrayList<>();
                      for (RedisClusterAsyncCommands<String, String> master : masters) {
                        scans.add(scanFrom(master, ScanCursor.INITIAL, args));
                      }
                      return CompletableFuture.allOf(scans.toArray(CompletableFuture<?>[]::new))
                          .thenApply(
                              done -> {
                                List<String> keys = new ArrayList<>();
                                scans.forEach(scan -> keys.addAll(scan.join()));
                                return List.copyOf(keys);
                              });
                    }));
  }

  private static CompletableFuture<List<String>> scanFrom(
      RedisClusterAsyncCommands<String, String> node, ScanCursor cursor, ScanArgs args) {
    return node.scan(cursor, args)
        .toCompletableFuture()
        .thenCompose(
            page -> {
              if (page.isFinished()) {
                return CompletableFuture.completedFuture(new ArrayList<>(page.getKeys()));
              }
              return scanFrom(node, page, args)
                  .thenApply(
                      rest -> {
                        rest.addAll(page.getKeys());
                        return rest;
                      });
            });
  }

  // Futures left unread on purpose: the handler only retires the connection; the caller reads the
  // reply.
  @SuppressWarnings("FutureReturnValueIgnored")
  private <T> CompletableFuture<T> send(
      Link link, Function<Link, ? extends CompletionStage<T>> command) {
    CompletableFuture<T> reply;
    try {
      reply = command.apply(link).toCompletableFuture();
    } catch (RedisException e) {
      reply = CompletableFuture.failedFuture(e);
    }
    reply.whenComplete(
        (value, failure) -> {
          Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
          if (cause != null
              && (!(cause instanceof RedisCommandExecutionException) || readOnly(cause))) {
            retire(link);
          }
        });
    return reply;
  }

  /**
   * Whether the server refused a write because it is a replica now. Redis 7 refuses a script that
   * may write with a READONLY reply; Redis 6 runs it, and the script fails with the READONLY error
   * of its first write inside an ERR reply.
   */
  private static boolean readOnly(Throwable failure) {
    return failure instanceof RedisReadOnlyException
        || String.valueOf(failure.getMessage()).contains("-READONLY ");
  }

  private synchronized void retire(Link link) {
    if (current == link) {
      closeCurrent();
    }
  }

  /**
   * Closes the current connection, once: one that dropped by itself still holds its resources until
   * closed, and Lettuce warns about a second close.
   */
  // Futures left unread on purpose: the connection closes in the background.
  @SuppressWarnings("FutureReturnValueIgnored")
  private void closeCurrent() {
    if (!currentClosed) {
      currentClosed = true;
      current.connection().closeAsync();
    }
  }

  @Override
  public void close() {
    Link last;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      if (currentClosed) {
        return;
      }
      currentClosed = true;
      last = current;
    }
    last.connection().close();
  }

  /** A command waiting for a new connection: how to send it, and how to fail it. */
  private record WaitingCommand(Consumer<Link> send, Consumer<Throwable> fail) {}

  /**
   * The reply of a command that waits for a connection. Sending first claims it, atomically with
   * every way of giving up on it (cancelling it, failing it, its deadline passing), so that a
   * command given up on is never sent.
   */
  private static final class WaitingReply<T> extends CompletableFuture<T> {
    private static final int WAITING = 0;
    private static final int SENT = 1;
    private static final int GIVEN_UP = 2;

    private final AtomicInteger state = new AtomicInteger(WAITING);
    private final long deadline;

    WaitingReply(long deadline) {
      this.deadline = deadline;
    }

    /**
     * @return true if the command may go out now; false if it was given up on (its reply then
     *     fails, if nothing completed it before)
     */
    boolean claimToSend() {
      if (System.nanoTime() - deadline >= 0) {
        completeExceptionally(
            new RedisCommandTimeoutException(
                "the command waited for a new connection until its caller gave up; it was not"
                    + " sent"));
      }
      return state.compareAndSet(WAITING, SENT);
    }

    @Override
    public boolean completeExceptionally(Throwable failure) {
      state.compareAndSet(WAITING, GIVEN_UP);
      return super.completeExceptionally(failure);
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      state.compareAndSet(WAITING, GIVEN_UP);
      return super.cancel(mayInterruptIfRunning);
    }

    @Override
    public boolean complete(T value) {
      state.compareAndSet(WAITING, GIVEN_UP);
      return super.complete(value);
    }
  }

  /** One open connection, to a server or to a cluster. */
  private interface Link {
    StatefulConnection<String, String> connection();

    /** The commands; in a cluster, each goes to the master of its key's slot. */
    RedisClusterAsyncCommands<String, String> commands();

    /** The commands of the node that serves {@code key}, all on one connection. */
    CompletableFuture<RedisClusterAsyncCommands<String, String>> node(String key);

    /** The commands of each master, each on one connection. */
    CompletableFuture<List<RedisClusterAsyncCommands<String, String>>> masters();

    default boolean isOpen() {
      return connection().isOpen();
    }
  }

  private record ServerLink(StatefulRedisConnection<String, String> connection) implements Link {
    @Override
    public RedisClusterAsyncCommands<String, String> commands() {
      return connection.async();
    }

    @Override
    public CompletableFuture<RedisClusterAsyncCommands<String, String>> node(String key) {
      return CompletableFuture.completedFuture(connection.async());
    }

    @Override
    public CompletableFuture<List<RedisClusterAsyncCommands<String, String>>> masters() {
      return CompletableFuture.completedFuture(List.of(connection.async()));
    }
  }

  private record ClusterLink(StatefulRedisClusterConnection<String, String> connection)
      implements Link {
    @Override
    public RedisClusterAsyncCommands<String, String> commands() {
      return connection.async();
    }

    /**
     * The connection to the slot's master that Lettuce routes the slot's commands over: it is
     * cached by host and port, like the one this returns.
     */
    @Override
    public CompletableFuture<RedisClusterAsyncCommands<String, String>> node(String key) {
      int slot = SlotHash.getSlot(key);
      RedisClusterNode master = connection.getPartitions().getMasterBySlot(slot);
      if (master == null) {
        return CompletableFuture.failedFuture(
            new RedisException("no master of the cluster serves hash slot " + slot));
      }
      return connectionTo(master);
    }

    /**
     * Node connections come asynchronously: Lettuce's own cluster-wide SCAN opens them with a
     * blocking call, which deadlocks when it runs on an event loop (as the continuation of a page).
     */
    @Override
    public CompletableFuture<List<RedisClusterAsyncCommands<String, String>>> masters() {
      List<CompletableFuture<RedisClusterAsyncCommands<String, String>>> masters =
          new ArrayList<>();
      for (RedisClusterNode node : connection.getPartitions()) {
        if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
          masters.add(connectionTo(node));
        }
      }
      return CompletableFuture.allOf(masters.toArray(CompletableFuture<?>[]::new))
          .thenApply(done -> masters.stream().map(CompletableFuture::join).toList());
    }

    private CompletableFuture<RedisClusterAsyncCommands<String, String>> connectionTo(
        RedisClusterNode node) {
      RedisURI uri = node.getUri();
      return connection
          .getConnectionAsync(uri.getHost(), uri.getPort())
          .thenApply(StatefulRedisConnection::async);
    }
  }
}
