package io.latchkey.redis;

import io.latchkey.BackendTimeoutException;
import io.latchkey.BackendUnavailableException;
import io.latchkey.Feature;
import io.latchkey.spi.AdminStore;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.BackendFactory;
import io.latchkey.spi.FenceStore;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.LatchStore;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.RenewResult;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.SemaphoreStore;
import io.latchkey.spi.WakeupBus;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The latchkey backend on Redis (standalone, Sentinel or Cluster), over Lettuce. It has every
 * feature: reentrant, fair, read-write locks and mutexes, semaphores, leased semaphores, count-down
 * latches, wake-ups by pub/sub and inspection. Open it with {@link
 * io.latchkey.Latchkey#connect(String)} and a {@code redis://} URI (see {@link
 * RedisBackendProvider}), or with {@link #open}, or over an application's own Lettuce client with
 * {@link #builder(RedisClient, RedisURI)} or {@link #builder(RedisClusterClient, Iterable)}.
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
   * Revocation. A request (lock-revoke.lua) publishes, to the own channel of each live holder's
   * client, the holder's grant; every client subscribes to its own channel on the wake-up
   * connection. These are classic channels even in a cluster: one client's channel serves the
   * locks of every slot, and PUBLISH reaches every node.
   *
   * Replicas. With waitReplicas in the URI, RedisGrants follows every grant with a barrier write
   * and WAIT on a third connection of its own (WAIT blocks its connection), shared by the grants
   * that come back meanwhile, and undoes a grant that too few replicas acknowledged.
   *
   * Renewal. renew() sends one script call per batch (per hash slot of the batch in a cluster,
   * where a script may only touch one slot): lock holders and leased permits alike, keyed by their
   * record hash. RedisCommandConnection.bySlot() is the one place that groups keys by slot; listing
   * locks uses it too.
   *
   * Shared clients. A backend built over an application's Lettuce client (builder) still opens its
   * own connections through clients of its own, configured as above: Lettuce's options belong to a
   * client, and an application's client re-sends in-flight commands when it reconnects. What it
   * shares is the client's ClientResources (LettuceResources: never shut down by latchkey) and TLS
   * options; the URIs are copies.
   *
   * Threads. Lettuce's event loops (shared by every backend of the JVM, or the application's client's
   * when built over one) run the callbacks; the
   * engine's scheduler (BackendContext) runs the one delayed task, a channel's lingering
   * unsubscribe. The engine writes the presence record (RedisAdminStore) through AdminStore.
   */

  private static final Logger LOG = LoggerFactory.getLogger(RedisBackend.class);

  private static final Duration LETTUCE_TIMEOUT_MARGIN = Duration.ofSeconds(1);

  private final RedisConnectionSettings settings;
  private final BackendContext context;
  private final RedisKeys keys;
  private final List<AbstractRedisClient> clients;
  private final RedisCommandConnection redis;
  private final @Nullable RedisCommandConnection replicaWaits;
  private final StatefulRedisPubSubConnection<String, String> pubSub;
  private final RedisAdminStore admin;
  private final RedisLockStore locks;
  private final RedisSemaphoreStore semaphores;
  private final RedisLeasedSemaphoreStore leasedSemaphores;
  private final RedisLatchStore latches;
  private final RedisFenceStore fences;
  private final RedisWakeups wakeups;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final String identity;
  private final LettuceResources resources;

  private RedisBackend(
      RedisConnectionSettings settings,
      BackendContext context,
      LettuceResources resources,
      List<AbstractRedisClient> clients,
      RedisCommandConnection redis,
      @Nullable RedisCommandConnection replicaWaits,
      StatefulRedisPubSubConnection<String, String> pubSub) {
    this.settings = settings;
    this.context = context;
    this.keys = new RedisKeys(settings.keyPrefix());
    this.identity = identity(settings);
    this.resources = resources;
    this.clients = List.copyOf(clients);
    this.redis = redis;
    this.replicaWaits = replicaWaits;
    this.pubSub = pubSub;
    RedisGrants grants =
        new RedisGrants(redis, replicaWaits, keys, settings.replicaWait(), settings.description());
    this.admin = new RedisAdminStore(redis, keys);
    this.locks = new RedisLockStore(redis, grants, keys, context.clientId());
    this.semaphores = new RedisSemaphoreStore(redis, grants, keys);
    this.leasedSemaphores = new RedisLeasedSemaphoreStore(redis, grants, keys, context.clientId());
    this.latches = new RedisLatchStore(redis, keys);
    this.fences = new RedisFenceStore(redis, keys);
    this.wakeups = new RedisWakeups(pubSub, redis.shardedPubSub(), keys, context.scheduler());
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
   * @throws BackendUnavailableException if Redis cannot be reached, refuses the credentials or runs
   *     a Redis older than 6.2 (the message names its version); a {@link BackendTimeoutException}
   *     if it has not answered within the context's operation timeout, which bounds the whole
   *     connect on every topology
   */
  public static RedisBackend open(URI uri, BackendContext context) {
    Objects.requireNonNull(uri, "uri must not be null");
    Objects.requireNonNull(context, "context must not be null");
    return open(RedisConnectionSettings.parse(uri), context, LettuceResources.shared());
  }

  /**
   * Starts a backend that shares an application's Lettuce {@link RedisClient} (a server, or a
   * master found through Sentinel):
   *
   * <pre>{@code
   * RedisURI uri = RedisURI.create("redis://localhost:6379");
   * RedisClient redis = RedisClient.create(uri);            // the application's, used elsewhere too
   * try (Latchkey latchkey =
   *     Latchkey.using(RedisBackend.builder(redis, uri).build(), LatchkeyOptions.defaults())) {
   *   ...
   * }
   * redis.shutdown();                                         // the application's to shut down
   * }</pre>
   *
   * <p>What is shared: the client's {@link ClientResources} (its event loops, timer, DNS resolver
   * and event bus: no second set of threads), its TLS options, and the URI's address, credentials,
   * database, client name and TLS settings. What is not: the client's connections and its other
   * options. Lettuce's options (reconnection among them) belong to a client, and an application's
   * client usually reconnects by itself and then re-sends the commands that were in flight, which
   * would run a lock script twice (a release run twice frees a lock its owner re-entered). So
   * latchkey opens its own two or three connections through Lettuce clients of its own, built on
   * the application's resources, exactly as for a URI (see {@link RedisBackendProvider}): commands
   * sent at most once, a pub/sub connection that reconnects by itself. Closing the latchkey client
   * closes those connections and clients; the application's client and its resources stay as they
   * were, and must outlive the latchkey client (close it first). The pub/sub connection reconnects
   * after the delays of the application's resources ({@code ClientResources.reconnectDelay()}),
   * where a backend opened from a URI retries within a second; a waiter that misses a wake-up
   * meanwhile finds out at its next re-check.
   *
   * @param client the application's client; only its resources and options are read
   * @param uri where the client connects (Lettuce's client does not tell its default URI): a
   *     server, or sentinels and a master name; copied, never changed
   * @return a builder with the defaults of a URI without options: key prefix {@code latchkey:}, no
   *     wait for replicas
   */
  public static Builder builder(RedisClient client, RedisURI uri) {
    Objects.requireNonNull(client, "client must not be null");
    Objects.requireNonNull(uri, "uri must not be null");
    return new Builder(
        client,
        uri.getSentinels().isEmpty()
            ? RedisConnectionSettings.Topology.STANDALONE
            : RedisConnectionSettings.Topology.SENTINEL,
        List.of(uri));
  }

  /**
   * Starts a backend that shares an application's Lettuce {@link RedisClusterClient}, as {@link
   * #builder(RedisClient, RedisURI)} does a client of one server: the client's resources and TLS
   * options are shared, its connections and other options are not (latchkey's cluster connections
   * accept commands while a node connection opens, never re-send them, and reload the topology when
   * the cluster redirects a command).
   *
   * @param client the application's cluster client; only its resources and options are read
   * @param seeds nodes of the cluster to learn the topology from, with the credentials and TLS
   *     settings of every node (Lettuce's client does not tell its seeds); copied, never changed
   * @return a builder with the defaults of a URI without options
   */
  public static Builder builder(RedisClusterClient client, Iterable<RedisURI> seeds) {
    Objects.requireNonNull(client, "client must not be null");
    Objects.requireNonNull(seeds, "seeds must not be null");
    List<RedisURI> nodes = new ArrayList<>();
    seeds.forEach(seed -> nodes.add(Objects.requireNonNull(seed, "a seed is null")));
    if (nodes.isEmpty()) {
      throw new IllegalArgumentException("seeds must name at least one node of the cluster");
    }
    return new Builder(client, RedisConnectionSettings.Topology.CLUSTER, nodes);
  }

  /**
   * Options of a backend over an application's Lettuce client: the options of a Redis URI that the
   * client's {@link RedisURI} cannot carry.
   */
  public static final class Builder {
    private final AbstractRedisClient client;
    private final RedisConnectionSettings.Topology topology;
    private final List<RedisURI> uris;
    private String keyPrefix = RedisConnectionSettings.DEFAULT_PREFIX;
    private ReplicaWait replicaWait = ReplicaWait.NONE;

    private Builder(
        AbstractRedisClient client,
        RedisConnectionSettings.Topology topology,
        List<RedisURI> uris) {
      this.client = client;
      this.topology = topology;
      this.uris = List.copyOf(uris);
    }

    /**
     * @param keyPrefix the prefix of every key latchkey writes, as the URI option {@code prefix}:
     *     {@code latchkey:} by default; clients with different prefixes do not see each other's
     *     records
     * @return this builder
     * @throws IllegalArgumentException if it is empty or has braces (they would move the hash tag)
     */
    public Builder keyPrefix(String keyPrefix) {
      Objects.requireNonNull(keyPrefix, "keyPrefix must not be null");
      String problem = RedisConnectionSettings.prefixProblem(keyPrefix);
      if (problem != null) {
        throw new IllegalArgumentException(problem + ", was '" + keyPrefix + "'");
      }
      this.keyPrefix = keyPrefix;
      return this;
    }

    /**
     * After every grant, waits until {@code replicas} replicas have acknowledged it, as the URI
     * options {@code waitReplicas} and {@code waitTimeout} (see {@link RedisBackendProvider}).
     *
     * @param replicas how many replicas must acknowledge each grant; 0 (the default) does not wait
     * @param timeout how long to wait for them, above 0 and at most a minute; it must also be
     *     shorter than the client's operation timeout, which opening the backend checks
     * @return this builder
     * @throws IllegalArgumentException if either is out of range
     */
    public Builder waitReplicas(int replicas, Duration timeout) {
      Objects.requireNonNull(timeout, "timeout must not be null");
      String problem = RedisConnectionSettings.replicaWaitProblem(replicas, timeout);
      if (problem != null) {
        throw new IllegalArgumentException(
            problem + ", was " + replicas + " replicas within " + timeout);
      }
      this.replicaWait = replicas == 0 ? ReplicaWait.NONE : new ReplicaWait(replicas, timeout);
      return this;
    }

    /**
     * @return what {@link io.latchkey.Latchkey#using} takes; each client it opens has connections
     *     of its own, on the application's client's resources, and connects within its operation
     *     timeout as {@link RedisBackend#open(URI, BackendContext)} does (with the same exceptions)
     */
    public BackendFactory build() {
      String prefix = keyPrefix;
      ReplicaWait wait = replicaWait;
      return context -> {
        List<RedisURI> copies = new ArrayList<>(uris.size());
        uris.forEach(uri -> copies.add(copy(uri)));
        RedisConnectionSettings settings =
            RedisConnectionSettings.of(
                topology, copies, prefix, wait, client.getOptions().getSslOptions());
        return open(settings, context, new LettuceResources(client.getResources()));
      };
    }

    /** A copy of everything a URI says (Lettuce's own copy leaves out the sentinels). */
    private static RedisURI copy(RedisURI uri) {
      RedisURI.Builder copy = RedisURI.builder(uri);
      uri.getSentinels().forEach(sentinel -> copy.withSentinel(RedisURI.builder(sentinel).build()));
      String master = uri.getSentinelMasterId();
      if (master != null) {
        copy.withSentinelMasterId(master);
      }
      return copy.build();
    }
  }

  /**
   * Opens a backend whose connections come from Lettuce clients of its own, built on {@code
   * resources}.
   *
   * @param settings where to connect; its RedisURIs are this backend's alone (they are configured
   *     here)
   */
  static RedisBackend open(
      RedisConnectionSettings settings, BackendContext context, LettuceResources lettuce) {
    Duration connectTimeout = context.operationTimeout();
    ReplicaWait replicaWait = settings.replicaWait();
    if (replicaWait.enabled() && replicaWait.timeout().compareTo(connectTimeout) >= 0) {
      throw new IllegalArgumentException(
          "invalid Redis URI '"
              + settings.description()
              + "': waitTimeout ("
              + replicaWait.timeout().toMillis()
              + " ms) must be shorter than the operation timeout ("
              + connectTimeout.toMillis()
              + " ms), which bounds a grant and its wait for replicas together");
    }
    Duration lettuceTimeout = connectTimeout.plus(LETTUCE_TIMEOUT_MARGIN);
    // Parsed for this backend alone, so its RedisURIs are ours to configure.
    for (RedisURI redisUri : settings.redisUris()) {
      redisUri.setTimeout(lettuceTimeout);
      redisUri.getSentinels().forEach(sentinel -> sentinel.setTimeout(lettuceTimeout));
    }
    ClientResources resources = lettuce.acquire();
    List<AbstractRedisClient> clients = new ArrayList<>();
    CompletableFuture<RedisCommandConnection> command;
    CompletableFuture<@Nullable RedisCommandConnection> waits =
        CompletableFuture.completedFuture(null);
    CompletableFuture<StatefulRedisPubSubConnection<String, String>> pubSub;
    try {
      if (settings.topology() == RedisConnectionSettings.Topology.CLUSTER) {
        RedisClusterClient commandClient =
            clusterClient(resources, settings, context, lettuceTimeout, false);
        clients.add(commandClient);
        RedisClusterClient pubSubClient =
            clusterClient(resources, settings, context, lettuceTimeout, true);
        clients.add(pubSubClient);
        command = RedisCommandConnection.cluster(commandClient, context.operationTimeout());
        if (replicaWait.enabled()) {
          waits =
              command.thenCompose(
                  connected ->
                      RedisCommandConnection.cluster(commandClient, context.operationTimeout()));
        }
        // A cluster client connects asynchronously only once it has loaded the topology.
        pubSub =
            command.thenCompose(
                connected ->
                    pubSubClient
                        .refreshPartitionsAsync()
                        .thenCompose(loaded -> pubSubClient.connectPubSubAsync(StringCodec.UTF8))
                        .<StatefulRedisPubSubConnection<String, String>>thenApply(c -> c)
                        .toCompletableFuture());
      } else {
        RedisClient commandClient = client(resources, settings, context, lettuceTimeout, false);
        clients.add(commandClient);
        RedisClient pubSubClient = client(resources, settings, context, lettuceTimeout, true);
        clients.add(pubSubClient);
        command =
            RedisCommandConnection.standalone(
                commandClient, settings.redisUri(), context.operationTimeout());
        if (replicaWait.enabled()) {
          waits =
              RedisCommandConnection.standalone(
                  commandClient, settings.redisUri(), context.operationTimeout());
        }
        pubSub =
            pubSubClient
                .connectPubSubAsync(StringCodec.UTF8, settings.redisUri())
                .toCompletableFuture();
      }
    } catch (RuntimeException e) {
      throw abandon(settings, lettuce, clients, e);
    }
    try {
      // Counted from the first connection attempt: the bound is on the network, not on setting up
      // the client library (its first use in a JVM loads and starts a good deal).
      CompletableFuture.allOf(command, waits, pubSub)
          .get(connectTimeout.toNanos(), TimeUnit.NANOSECONDS);
      return new RedisBackend(
          settings, context, lettuce, clients, command.join(), waits.join(), pubSub.join());
    } catch (TimeoutException | InterruptedException | ExecutionException | RuntimeException e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      // Whatever connects late is closed: nothing else will (and nothing waits for it).
      var unusedCommand = command.thenAccept(RedisCommandConnection::close);
      var unusedWaits = waits.thenAccept(connection -> closeIfAny(connection));
      var unusedPubSub =
          pubSub.thenAccept(
              connection -> {
                var unusedClose = connection.closeAsync();
              });
      if (e instanceof TimeoutException) {
        throw abandon(
            settings,
            lettuce,
            clients,
            new BackendTimeoutException(
                "cannot connect to "
                    + settings.description()
                    + ": no answer within "
                    + connectTimeout.toMillis()
                    + " ms (operationTimeout)"
                    + (settings.redisUri().isSsl()
                        ? "; if the server does not speak TLS, use redis://"
                        : "")));
      }
      Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
      throw abandon(settings, lettuce, clients, cause);
    }
  }

  private static void closeIfAny(@Nullable RedisCommandConnection connection) {
    if (connection != null) {
      connection.close();
    }
  }

  /**
   * Shuts down the clients of a backend that failed to open, without waiting for them (so that the
   * failure comes within the bound), and says why it failed.
   */
  private static BackendUnavailableException abandon(
      RedisConnectionSettings settings,
      LettuceResources lettuce,
      List<AbstractRedisClient> clients,
      Throwable failure) {
    CompletableFuture<?>[] shutdowns =
        clients.stream()
            .map(client -> client.shutdownAsync(0, 2, TimeUnit.SECONDS))
            .toArray(CompletableFuture<?>[]::new);
    var unused =
        CompletableFuture.allOf(shutdowns).whenComplete((done, ignored) -> lettuce.release());
    if (failure instanceof BackendUnavailableException unavailable) {
      return unavailable;
    }
    return new BackendUnavailableException(
        "cannot connect to "
            + settings.description()
            + ": "
            + causes(failure)
            + tlsHint(settings, failure),
        failure);
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

  /**
   * The messages of a failure and its causes on one line, each once; a cause without a message
   * shows its class instead (never {@code null}).
   */
  private static String causes(Throwable failure) {
    StringBuilder text = new StringBuilder();
    for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
      if (cause instanceof CompletionException || cause instanceof ExecutionException) {
        continue;
      }
      String message = cause.getMessage();
      if (message == null || message.isBlank()) {
        message = cause.getClass().getSimpleName();
      }
      message = message.strip().replaceAll("\\s*\\R\\s*", " ");
      if (text.indexOf(message) < 0) {
        text.append(text.length() == 0 ? "" : ": ").append(message);
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
  public String identity() {
    return identity;
  }

  /**
   * The lock service a URI names, however it was spelled: the topology, the node addresses (host
   * names resolved, sorted: the seeds of a cluster or the sentinels of a master in any order), the
   * database, the master name and the key prefix. TLS, credentials and client options do not change
   * which records a client reaches, so they are left out.
   */
  static String identity(RedisConnectionSettings settings) {
    TreeSet<String> nodes = new TreeSet<>();
    String master = "";
    int database = 0;
    for (RedisURI uri : settings.redisUris()) {
      if (uri.getSentinels().isEmpty()) {
        nodes.add(address(uri.getHost(), uri.getPort()));
      } else {
        uri.getSentinels()
            .forEach(sentinel -> nodes.add(address(sentinel.getHost(), sentinel.getPort())));
        master = "#" + uri.getSentinelMasterId();
      }
      database = uri.getDatabase();
    }
    return "redis-"
        + settings.topology().name().toLowerCase(java.util.Locale.ROOT)
        + "://"
        + String.join(",", nodes)
        + "/"
        + database
        + "?prefix="
        + settings.keyPrefix()
        + master;
  }

  private static String address(String host, int port) {
    String resolved;
    try {
      resolved = InetAddress.getByName(host).getHostAddress();
    } catch (UnknownHostException e) {
      resolved = host.toLowerCase(java.util.Locale.ROOT);
    }
    return resolved + ":" + port;
  }

  /**
   * Everything but what belongs to other families: holds live in Redis by the Redis clock, not on a
   * connection, and waiting is by pub/sub, not by watches.
   */
  @Override
  public Set<Feature> features() {
    Set<Feature> features = EnumSet.allOf(Feature.class);
    features.remove(Feature.CONNECTION_BOUND_HOLDS);
    features.remove(Feature.WAKEUP_WATCH);
    return features;
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
  public AdminStore admin() {
    return admin;
  }

  @Override
  public Optional<FenceStore> fences() {
    return Optional.of(fences);
  }

  @Override
  public WakeupBus wakeups() {
    return wakeups;
  }

  @Override
  public CompletionStage<WakeupBus.Subscription> subscribeRevocations(Consumer<GrantRef> listener) {
    return wakeups.subscribeOwnChannel(
        keys.revocations(context.clientId()),
        message -> {
          GrantRef grant;
          try {
            grant = RedisLockStore.revocationRequest(message);
          } catch (IllegalArgumentException malformed) {
            LOG.warn("ignoring a malformed revocation request: '{}'", message);
            return;
          }
          listener.accept(grant);
        });
  }

  /**
   * One script call per hash slot (one in all outside a cluster). A slot whose call fails, or does
   * not answer within three quarters of the operation timeout, fails only its grants, so the result
   * arrives before the engine gives up on the whole call; a slot that answers reports its gone
   * grants to the engine at once ({@link io.latchkey.spi.GrantEvents#lost}), without waiting for a
   * slow master.
   */
  @Override
  public CompletionStage<RenewResult> renew(Collection<GrantRef> grants, long leaseMillis) {
    Set<GrantRef> gone = ConcurrentHashMap.newKeySet();
    Map<GrantRef, Throwable> failed = new ConcurrentHashMap<>();
    List<GrantRef> leased = new ArrayList<>(grants.size());
    for (GrantRef grant : grants) {
      if (grant.type() == ResourceType.LOCK || grant.type() == ResourceType.LEASED_SEMAPHORE) {
        leased.add(grant);
      } else {
        gone.add(grant);
      }
    }
    List<CompletableFuture<Void>> calls = new ArrayList<>();
    for (List<GrantRef> group :
        redis.bySlot(leased, grant -> keys.leaseRecord(grant.type(), grant.name()))) {
      calls.add(
          boundedBySlot(renewCall(group, leaseMillis))
              .handle(
                  (slotGone, failure) -> {
                    if (failure != null) {
                      group.forEach(grant -> failed.put(grant, failure));
                    } else {
                      gone.addAll(slotGone);
                      slotGone.forEach(grant -> context.events().lost(grant, GONE));
                    }
                    return null;
                  }));
    }
    return CompletableFuture.allOf(calls.toArray(CompletableFuture<?>[]::new))
        .thenApply(done -> new RenewResult(gone, failed, -1));
  }

  private static final String GONE =
      "the backend no longer knows it (its lease expired, or it was force-released)";

  private <T> CompletableFuture<T> boundedBySlot(CompletableFuture<T> call) {
    long bound = context.operationTimeout().toNanos() / 4 * 3;
    ScheduledFuture<?> timer =
        context
            .scheduler()
            .schedule(
                () ->
                    call.completeExceptionally(
                        new TimeoutException(
                            "no answer within " + Duration.ofNanos(bound).toMillis() + " ms")),
                bound,
                TimeUnit.NANOSECONDS);
    return call.whenComplete((answer, failure) -> timer.cancel(false));
  }

  /** In a cluster, the hash slot of the grant's record; else one shard for all. */
  @Override
  public String renewalShard(GrantRef grant) {
    if (settings.topology() != RedisConnectionSettings.Topology.CLUSTER) {
      return "";
    }
    return Integer.toString(SlotHash.getSlot(keys.leaseRecord(grant.type(), grant.name())));
  }

  /** One script call renewing {@code grants}: locks or leased permits, all in one hash slot. */
  private CompletableFuture<List<GrantRef>> renewCall(List<GrantRef> grants, long leaseMillis) {
    String[] scriptKeys = new String[grants.size()];
    String[] args = new String[2 * grants.size() + 1];
    args[0] = Long.toString(leaseMillis);
    for (int i = 0; i < grants.size(); i++) {
      GrantRef grant = grants.get(i);
      scriptKeys[i] = keys.leaseRecord(grant.type(), grant.name());
      args[2 * i + 1] = grant.holderId();
      args[2 * i + 2] = Long.toString(grant.fencingToken());
    }
    return redis
        .<List<?>>run(RedisScript.RENEW, ScriptOutputType.MULTI, scriptKeys, args)
        .thenApply(
            indexes -> {
              List<GrantRef> gone = new ArrayList<>(indexes.size());
              for (Object index : indexes) {
                gone.add(grants.get(Math.toIntExact(RedisReplies.number(index)) - 1));
              }
              return gone;
            });
  }

  /**
   * Closes the connections. Held records stay on the server until released or expired. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      pubSub.close();
      redis.close();
      closeIfAny(replicaWaits);
    } finally {
      clients.forEach(client -> client.shutdown(0, 2, TimeUnit.SECONDS));
      resources.release();
    }
  }

  @Override
  public String toString() {
    return "RedisBackend[" + description() + "]";
  }
}
