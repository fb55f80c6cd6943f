package io.latchkey.redis;

import io.latchkey.BackendUnavailableException;
import io.latchkey.Feature;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LatchStore;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.SemaphoreStore;
import io.latchkey.spi.WakeupBus;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLException;

/**
 * The latchkey backend on Redis (standalone, Sentinel or Cluster), over Lettuce. It has every
 * feature: reentrant, fair, read-write locks and mutexes, semaphores, leased semaphores, count-down
 * latches, wake-ups by pub/sub and inspection. Open it with {@link
 * io.latchkey.Latchkey#connect(String)} and a {@code redis://} URI (see {@link
 * RedisBackendProvider}), or with {@link #open}.
 *
 * <p>Every operation is one atomic step on the server: one Lua script (or, where one native command
 * does the whole job, that command), one round trip. Expiry is by the Redis clock.
 */
public final class RedisBackend implements LatchkeyBackend {
  /*
   * How it works.
   *
   * Records. RedisKeys describes the keys: per lock a hash of holders that expires with the latest
   * lease, a fencing counter that never expires, and a wait queue; per semaphore, leased semaphore
   * and latch their counters; a presence record per client. Every key of one resource shares a
   * hash tag, so that in Redis Cluster they all live in one slot and one script may touch them.
   *
   * Scripts. RedisScript lists them, one per SPI operation that reads and writes; each reads TIME,
   * drops the expired holders, permits or queue places it meets, applies the rules of the
   * in-memory reference backend, sets each key's PEXPIRE to its latest deadline, and publishes a
   * wake-up where the SPI asks for one: a lock's release wakes only the head of its wait queue.
   * Scripts run by EVALSHA and fall back to EVAL on NOSCRIPT. The operations that are one native
   * command (reading or setting a semaphore, a latch or a leased semaphore's total: GET, SET NX,
   * HSETNX) send just that command. Fencing tokens are max(last token + 1, TIME in microseconds),
   * so that they keep growing when Redis loses the counters (ADR 0002).
   *
   * Connections. Two per backend. All commands share one connection (in a cluster, one cluster
   * connection that routes each command to the master of its slot); each command is sent at most
   * once, and the connection is replaced when it drops (RedisCommandConnection explains why
   * Lettuce's re-sending is wrong for locks). The engine bounds every call by its operation
   * timeout; Lettuce's own timeout, a second longer, reaps what the engine gave up on. Wake-ups
   * arrive on one pub/sub connection that Lettuce reconnects and re-subscribes by itself; its
   * channels linger a while after their last waiter leaves (RedisWakeups). In a cluster of Redis 7
   * or later they are shard channels.
   *
   * Replicas. With waitReplicas in the URI, RedisGrants follows every grant with WAIT on the same
   * connection and undoes a grant that too few replicas acknowledged.
   *
   * Renewal. renew() sends one script call per batch (per hash slot of the batch in a cluster,
   * where a script may only touch one slot): lock holders and leased permits alike, keyed by their
   * record hash. RedisCommandConnection.bySlot() is the one place that groups keys by slot; listing
   * locks uses it too.
   *
   * Threads. Lettuce's event loops (shared by every backend of the JVM) run the callbacks; a small
   * daemon scheduler per backend refreshes the presence record and orders pub/sub subscriptions.
   */

  private static final Duration LETTUCE_TIMEOUT_MARGIN = Duration.ofSeconds(1);

  private final RedisConnectionSettings settings;
  private final BackendContext context;
  private final RedisKeys keys;
  private final List<AbstractRedisClient> clients;
  private final RedisCommandConnection redis;
  private final StatefulRedisPubSubConnection<String, String> pubSub;
  private final ScheduledExecutorService scheduler;
  private final RedisPresence presence;
  private final RedisLockStore locks;
  private final RedisSemaphoreStore semaphores;
  private final RedisLeasedSemaphoreStore leasedSemaphores;
  private final RedisLatchStore latches;
  private final RedisWakeups wakeups;
  private final AtomicBoolean closed = new AtomicBoolean();

  private RedisBackend(
      RedisConnectionSettings settings,
      BackendContext context,
      List<AbstractRedisClient> clients,
      RedisCommandConnection redis,
      StatefulRedisPubSubConnection<String, String> pubSub) {
    this.settings = settings;
    this.context = context;
    this.keys = new RedisKeys(settings.keyPrefix());
    this.clients = List.copyOf(clients);
    this.redis = redis;
    this.pubSub = pubSub;
    ScheduledThreadPoolExecutor executor =
        new ScheduledThreadPoolExecutor(
            1,
            runnable -> {
              String id = context.clientId();
              Thread thread =
                  new Thread(
                      runnable, "latchkey-redis-" + id.substring(0, Math.min(8, id.length())));
              thread.setDaemon(true);
              return thread;
            });
    executor.setRemoveOnCancelPolicy(true);
    this.scheduler = executor;
    RedisGrants grants = new RedisGrants(redis, settings.replicaWait(), settings.description());
    this.presence = new RedisPresence(redis, keys, context.clientId(), context.leaseTime());
    this.locks = new RedisLockStore(redis, grants, keys, context.clientId());
    this.semaphores = new RedisSemaphoreStore(redis, grants, keys);
    this.leasedSemaphores = new RedisLeasedSemaphoreStore(redis, grants, keys);
    this.latches = new RedisLatchStore(redis, keys);
    this.wakeups = new RedisWakeups(pubSub, redis.shardedPubSub(), keys, scheduler);
    presence.start(scheduler);
  }

  /**
   * Connects to Redis.
   *
   * @param uri a {@code redis://}, {@code rediss://}, {@code redis-sentinel://}, {@code
   *     rediss-sentinel://}, {@code redis-cluster://} or {@code rediss-cluster://} URI, as
   *     described by {@link RedisBackendProvider}
   * @param context the client's identity and bounds
   * @return the open backend; close it (or the client that owns it) when done
   * @throws IllegalArgumentException if the URI is malformed, saying what is wrong
   * @throws BackendUnavailableException if Redis cannot be reached or refuses the credentials
   */
  public static RedisBackend open(URI uri, BackendContext context) {
    Objects.requireNonNull(uri, "uri must not be null");
    Objects.requireNonNull(context, "context must not be null");
    RedisConnectionSettings settings = RedisConnectionSettings.parse(uri);
    Duration lettuceTimeout = context.operationTimeout().plus(LETTUCE_TIMEOUT_MARGIN);
    // Parsed for this backend alone, so its RedisURIs are ours to configure.
    settings.redisUris().forEach(redisUri -> redisUri.setTimeout(lettuceTimeout));
    ClientResources resources = SharedClientResources.acquire();
    List<AbstractRedisClient> clients = new ArrayList<>();
    RedisCommandConnection redis = null;
    try {
      StatefulRedisPubSubConnection<String, String> pubSub;
      if (settings.topology() == RedisConnectionSettings.Topology.CLUSTER) {
        RedisClusterClient commandClient =
            clusterClient(resources, settings, context, lettuceTimeout, false);
        clients.add(commandClient);
        RedisClusterClient pubSubClient =
            clusterClient(resources, settings, context, lettuceTimeout, true);
        clients.add(pubSubClient);
        redis = RedisCommandConnection.cluster(commandClient);
        pubSub = pubSubClient.connectPubSub(StringCodec.UTF8);
      } else {
        RedisClient commandClient = client(resources, settings, context, lettuceTimeout, false);
        clients.add(commandClient);
        RedisClient pubSubClient = client(resources, settings, context, lettuceTimeout, true);
        clients.add(pubSubClient);
        redis = RedisCommandConnection.standalone(commandClient, settings.redisUri());
        pubSub = pubSubClient.connectPubSub(StringCodec.UTF8, settings.redisUri());
      }
      return new RedisBackend(settings, context, clients, redis, pubSub);
    } catch (RuntimeException e) {
      if (redis != null) {
        redis.close();
      }
      clients.forEach(client -> client.shutdown(0, 2, TimeUnit.SECONDS));
      SharedClientResources.release();
      throw new BackendUnavailableException(
          "cannot connect to " + settings.description() + ": " + causes(e) + tlsHint(settings, e),
          e);
    }
  }

  private static RedisClient client(
      ClientResources resources,
      RedisConnectionSettings settings,
      BackendContext context,
      Duration timeout,
      boolean reconnect) {
    RedisClient client = RedisClient.create(resources);
    client.setOptions(
        ClientOptions.builder()
            .autoReconnect(reconnect)
            .sslOptions(settings.sslOptions())
            .timeoutOptions(TimeoutOptions.enabled(timeout))
            .socketOptions(socketOptions(context))
            .build());
    return client;
  }

  /**
   * A cluster client on the seeds. It reloads the topology when the cluster redirects a command or
   * a node is unknown or gone (adaptive refresh); the command connection also reloads it whenever
   * it reconnects.
   *
   * <p>Commands are accepted while a node connection is still being opened: since 7.7, Lettuce
   * rejects a command that waits for a node connection it opens lazily (the first command to a
   * master, or to a new master after a fail-over) when the client rejects commands while
   * disconnected, which a client without auto-reconnect does by default. Accepted commands are
   * still sent at most once: without auto-reconnect nothing re-sends a command queued on a node
   * connection that dropped; it times out, and its failure retires the cluster connection.
   */
  private static RedisClusterClient clusterClient(
      ClientResources resources,
      RedisConnectionSettings settings,
      BackendContext context,
      Duration timeout,
      boolean reconnect) {
    RedisClusterClient client = RedisClusterClient.create(resources, settings.redisUris());
    client.setOptions(
        ClusterClientOptions.builder()
            .autoReconnect(reconnect)
            .disconnectedBehavior(ClientOptions.DisconnectedBehavior.ACCEPT_COMMANDS)
            .sslOptions(settings.sslOptions())
            .timeoutOptions(TimeoutOptions.enabled(timeout))
            .socketOptions(socketOptions(context))
            // Every adaptive refresh trigger (MOVED, ASK, reconnects...) is on by default since
            // Lettuce 7, which deprecated the switch that turned them all on.
            .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder().build())
            .build());
    return client;
  }

  private static SocketOptions socketOptions(BackendContext context) {
    return SocketOptions.builder()
        .connectTimeout(context.operationTimeout())
        .keepAlive(true)
        .build();
  }

  private static String causes(Throwable failure) {
    StringBuilder text = new StringBuilder(String.valueOf(failure.getMessage()));
    for (Throwable cause = failure.getCause(); cause != null; cause = cause.getCause()) {
      String message = String.valueOf(cause.getMessage());
      if (text.indexOf(message) < 0) {
        text.append(": ").append(message);
      }
    }
    return text.toString();
  }

  /** Says what to check when a connection failure looks like a TLS problem. */
  private static String tlsHint(RedisConnectionSettings settings, Throwable failure) {
    boolean tls = settings.redisUri().isSsl();
    for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
      if (tls && cause instanceof SSLException) {
        return " (TLS handshake failed: is the server's certificate trusted and for this host?"
            + " Trust its CA with the URI option trustedCertificates=/path/to/ca.pem)";
      }
      if (!tls
          && cause instanceof IOException
          && !(cause instanceof ConnectException)
          && !(cause instanceof UnknownHostException)) {
        return " (if the server speaks TLS only, use rediss://)";
      }
    }
    return "";
  }

  @Override
  public String description() {
    return settings.description();
  }

  @Override
  public Set<Feature> features() {
    return EnumSet.allOf(Feature.class);
  }

  @Override
  public LockStore locks() {
    return locks;
  }

  @Override
  public SemaphoreStore semaphores() {
    return semaphores;
  }

  @Override
  public LeasedSemaphoreStore leasedSemaphores() {
    return leasedSemaphores;
  }

  @Override
  public LatchStore latches() {
    return latches;
  }

  @Override
  public WakeupBus wakeups() {
    return wakeups;
  }

  @Override
  public CompletionStage<Set<HolderRef>> renew(Collection<HolderRef> holders, long leaseMillis) {
    Set<HolderRef> gone = ConcurrentHashMap.newKeySet();
    List<HolderRef> leased = new ArrayList<>(holders.size());
    for (HolderRef holder : holders) {
      if (holder.type() == ResourceType.LOCK || holder.type() == ResourceType.LEASED_SEMAPHORE) {
        leased.add(holder);
      } else {
        gone.add(holder);
      }
    }
    List<CompletableFuture<Void>> calls = new ArrayList<>();
    for (List<HolderRef> group :
        redis.bySlot(leased, holder -> keys.leaseRecord(holder.type(), holder.name()))) {
      calls.add(renewCall(group, leaseMillis).thenAccept(gone::addAll));
    }
    return CompletableFuture.allOf(calls.toArray(CompletableFuture<?>[]::new))
        .thenApply(done -> Set.copyOf(gone));
  }

  /** One script call renewing {@code holders}: locks or leased permits, all in one hash slot. */
  private CompletableFuture<List<HolderRef>> renewCall(List<HolderRef> holders, long leaseMillis) {
    String[] scriptKeys = new String[holders.size()];
    String[] args = new String[holders.size() + 1];
    args[0] = Long.toString(leaseMillis);
    for (int i = 0; i < holders.size(); i++) {
      HolderRef holder = holders.get(i);
      scriptKeys[i] = keys.leaseRecord(holder.type(), holder.name());
      args[i + 1] = holder.holderId();
    }
    return redis
        .<List<?>>run(RedisScript.RENEW, ScriptOutputType.MULTI, scriptKeys, args)
        .thenApply(
            indexes -> {
              List<HolderRef> gone = new ArrayList<>(indexes.size());
              for (Object index : indexes) {
                gone.add(holders.get(Math.toIntExact(RedisReplies.number(index)) - 1));
              }
              return gone;
            });
  }

  /**
   * Deletes this client's presence record (waiting at most the operation timeout) and closes the
   * connections. Held records stay on the server until released or expired. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      presence.stop(scheduler, context.operationTimeout());
      pubSub.close();
      redis.close();
    } finally {
      scheduler.shutdownNow();
      clients.forEach(client -> client.shutdown(0, 2, TimeUnit.SECONDS));
      SharedClientResources.release();
    }
  }

  @Override
  public String toString() {
    return "RedisBackend[" + description() + "]";
  }
}
