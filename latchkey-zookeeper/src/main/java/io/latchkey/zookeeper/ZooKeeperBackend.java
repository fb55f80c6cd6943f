package io.latchkey.zookeeper;

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
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;

/**
 * The latchkey backend on ZooKeeper, over the Apache Curator framework: reentrant, fair and
 * read-write locks and mutexes on ephemeral sequential nodes, semaphores, leased semaphores (lease
 * nodes), count-down latches, inspection and presence. Open it with {@link
 * io.latchkey.Latchkey#connect(String)} and a {@code zookeeper://} URI (see {@link
 * ZooKeeperBackendProvider}), or over a {@link CuratorFramework} of your own with {@link
 * #builder(CuratorFramework)}.
 *
 * <p>Grants are session-bound (docs/adr/0005-session-and-connection-bound-backends.md): a lock or
 * permit is a node that lives as long as the session of the client that made it. So the backend
 * declares {@link Feature#CONNECTION_BOUND_HOLDS} and not {@link Feature#LEASE_TIME}: an explicit
 * lease time on a lock is refused; the engine's watchdog lease bounds how long a grant is trusted
 * without news, and every grant and renewal is valid for at most the negotiated session timeout.
 * The one exception is a leased semaphore's permit with an explicit lease: where the server enables
 * TTL nodes ({@code zookeeper.extendedTypesEnabled=true} on every server), such a permit is a TTL
 * node that the server deletes after the lease, and the backend declares {@link
 * Feature#PERMIT_LEASE_TIME}; it asks the server once, when it opens. Elsewhere it refuses those
 * leases too, naming the setting. The session's states reach the engine as lease events: SUSPENDED
 * suspends every grant (not valid, not lost yet), RECONNECTED with the same session resumes them
 * (the engine confirms each node before trusting it again). When the session ends (LOST, or a
 * reconnection with a new session), every grant of the ended session is lost: at once if the client
 * has no new session yet, else as the engine confirms each grant and finds its node gone. A LOST
 * that Curator posts for a late answer while the client's session lives is ignored.
 */
public final class ZooKeeperBackend implements LatchkeyBackend {
  /*
   * How it works.
   *
   * Records. ZooKeeperPaths describes the tree under the namespace. Locks are ZooKeeperLockStore's
   * recipe (one ephemeral sequential node per owner, a watch on the node ahead, the creation zxid
   * above the data's TokenBase as fencing token); counters (semaphores, totals, latches) are
   * versioned writes (ZooKeeperCounters); leased permits are ephemeral children (TTL children for
   * explicit leases) created in one multi-op with a versioned write of their semaphore.
   *
   * At most once. Every call goes out once, in the background (ZooKeeperCalls). The client this
   * backend builds never retries an operation (RetryNTimes(0)): a call that fails on a lost
   * connection may or may not have been applied, and the engine decides what that means. A
   * versioned write refused for a stale version was not applied, so it is read and tried again;
   * that is the only repetition. A queue place nobody uses any more is deleted by its timer.
   *
   * Layouts. LockLayout says where a lock's directory is and how latchkey's nodes are named; the
   * Curator layouts make the directory the one a Curator recipe uses and the names the ones it
   * sorts by, and the lock store counts Curator's nodes as holders with an unknown owner.
   *
   * Renewal. Nothing on the server expires a renewed grant's node but the end of its session, so
   * a renewal only confirms that each grant's node exists with the grant's token, in one pipelined
   * batch of reads, and caps the validity at the session timeout. TTL permits are never renewed
   * (explicit leases are not); the engine only confirms them after a suspension, by the same read.
   *
   * TTL nodes. The server deletes a TTL node up to one container check interval after its time to
   * live (ZooKeeperLeasedSemaphoreStore has the rule); the probe at open decides whether the
   * backend offers them at all (probeTtlNodes).
   */

  /**
   * Why {@link Feature#PERMIT_LEASE_TIME} is missing when the server refuses TTL nodes: the setting
   * that turns them on.
   */
  static final String NO_TTL_NODES =
      "explicit permit leases are TTL nodes, which this ZooKeeper server does not enable; start"
          + " every server of the ensemble with the Java system property"
          + " zookeeper.extendedTypesEnabled=true (server ids must then be below 255)";

  /** The namespace latchkey's nodes live under when the URI names none. */
  public static final String DEFAULT_NAMESPACE = "latchkey";

  /** What this backend offers (package-private so that the kit fixture declares the same). */
  static final Set<Feature> FEATURES =
      EnumSet.of(
          Feature.FAIR_LOCK,
          Feature.READ_WRITE_LOCK,
          Feature.SEMAPHORE,
          Feature.LEASED_SEMAPHORE,
          Feature.COUNT_DOWN_LATCH,
          Feature.REMOTE_OWNER_TOKENS,
          Feature.CONNECTION_BOUND_HOLDS,
          Feature.WAKEUP_WATCH,
          Feature.ADMIN,
          Feature.PRESENCE,
          Feature.SYNCHRONIZER_INSPECTION);

  private final CuratorFramework client;
  private final boolean ownsClient;
  private final String description;
  private final String identity;
  private final BackendContext context;
  private final ConnectionGate gate;
  private final ZooKeeperLockStore locks;
  private final ZooKeeperSemaphoreStore semaphores;
  private final ZooKeeperLeasedSemaphoreStore leasedSemaphores;
  private final ZooKeeperLatchStore latches;
  private final ZooKeeperAdminStore admin;
  private final Set<Feature> features;
  private final Optional<FenceStore> fences;
  private final ConnectionStateListener sessionListener = this::sessionChanged;
  private final AtomicBoolean closed = new AtomicBoolean();

  /** The session whose grants and places this backend keeps; guarded by {@code this}. */
  private long sessionId;

  /** Whether the grants were reported suspended and not resumed since; guarded by {@code this}. */
  private boolean suspended;

  private volatile long sessionTimeoutMillis;

  private ZooKeeperBackend(
      CuratorFramework client,
      boolean ownsClient,
      String namespace,
      String description,
      String identity,
      LockLayout layout,
      BackendContext context) {
    this.client = client;
    this.ownsClient = ownsClient;
    this.description = description;
    this.identity = identity;
    this.context = context;
    try {
      if (ownsClient) {
        client.start();
      } else if (client.getState() != CuratorFrameworkState.STARTED) {
        throw new IllegalArgumentException(
            "the CuratorFramework must be started before latchkey uses it");
      }
      if (!client.blockUntilConnected(
          (int) context.operationTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
        throw new BackendUnavailableException(
            description
                + " did not connect within the operation timeout of "
                + context.operationTimeout().toMillis()
                + " ms",
            null);
      }
      ZooKeeper zooKeeper = client.getZookeeperClient().getZooKeeper();
      sessionId = zooKeeper.getSessionId();
      sessionTimeoutMillis = zooKeeper.getSessionTimeout();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      closeClient();
      throw new BackendUnavailableException("interrupted while connecting to " + description, e);
    } catch (RuntimeException e) {
      closeClient();
      throw e;
    } catch (Exception e) {
      closeClient();
      throw new BackendUnavailableException("cannot connect to " + description, e);
    }
    // Answers are handled where ZooKeeper delivers them (its event thread, as watches are): each
    // hop to another thread is a wait for a core, which on a busy machine costs more than the call.
    ConnectionGate gate =
        new ConnectionGate(
            () -> client.getZookeeperClient().isConnected(),
            context.blockingExecutor(),
            context.scheduler());
    ZooKeeperCalls calls =
        new ZooKeeperCalls(
            client.usingNamespace(namespace), Runnable::run, gate::heardDisconnection);
    boolean ttlNodes;
    try {
      ttlNodes = probeTtlNodes(calls, context.operationTimeout(), description);
    } catch (RuntimeException e) {
      closeClient();
      throw e;
    }
    Set<Feature> offered = EnumSet.copyOf(FEATURES);
    if (ttlNodes) {
      offered.add(Feature.PERMIT_LEASE_TIME);
    }
    this.features = Set.copyOf(offered);
    ClientIdentity self = new ClientIdentity(context.clientId(), localHost(), currentPid());
    ZooKeeperCounters counters = new ZooKeeperCounters(calls);
    this.gate = gate;
    StrandedNodes stranded = new StrandedNodes(calls, gate);
    TokenBase tokenBase = new TokenBase(calls, () -> handleSession().orElse(0));
    this.locks =
        new ZooKeeperLockStore(
            calls,
            self,
            this::sessionTimeoutMillis,
            () -> handleSession().orElse(0),
            tokenBase,
            context.scheduler(),
            gate,
            stranded,
            layout);
    this.semaphores = new ZooKeeperSemaphoreStore(counters, gate);
    this.leasedSemaphores =
        new ZooKeeperLeasedSemaphoreStore(
            calls,
            counters,
            this::sessionTimeoutMillis,
            stranded,
            gate,
            ttlNodes,
            description,
            self,
            tokenBase);
    this.latches = new ZooKeeperLatchStore(counters, gate);
    this.admin = new ZooKeeperAdminStore(calls, counters, layout, tokenBase);
    // A Curator layout's lock directories are shared with Curator, which must not meet a fence.
    this.fences =
        layout == LockLayout.LATCHKEY
            ? Optional.of(new ZooKeeperFenceStore(calls, admin))
            : Optional.empty();
    client.getConnectionStateListenable().addListener(sessionListener);
  }

  /**
   * Whether the server takes TTL nodes, asked once when the backend opens (the engine reads the
   * features then). The probe creates a TTL node under a parent that does not exist, so that it
   * leaves nothing behind: the server checks that TTL nodes are enabled before it looks for the
   * parent, so it answers UNIMPLEMENTED where they are off and NONODE where they are on. Should the
   * parent exist after all, the node is made (with a time to live of 1 ms) and deleted.
   *
   * @throws BackendUnavailableException if the server did not answer in time
   */
  private static boolean probeTtlNodes(ZooKeeperCalls calls, Duration timeout, String description) {
    CompletableFuture<KeeperException.Code> answer =
        calls
            .send(
                (callback, on) ->
                    calls
                        .client()
                        .create()
                        .withTtl(1)
                        .withMode(CreateMode.PERSISTENT_WITH_TTL)
                        .inBackground(callback, on)
                        .forPath(ZooKeeperPaths.TTL_PROBE, new byte[0]))
            .thenApply(ZooKeeperCalls::code);
    KeeperException.Code code;
    try {
      code = answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BackendUnavailableException(
          "interrupted while asking " + description + " whether it enables TTL nodes", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new BackendUnavailableException(
          description + " did not answer whether it enables TTL nodes", e);
    }
    return switch (code) {
      case NONODE, NODEEXISTS -> true;
      case OK -> {
        @SuppressWarnings("FutureReturnValueIgnored") // a 1 ms TTL node goes by itself anyway
        CompletableFuture<KeeperException.Code> ignored =
            calls.delete(ZooKeeperPaths.TTL_PROBE, -1);
        yield true;
      }
      case UNIMPLEMENTED -> false;
      default ->
          throw new BackendUnavailableException(
              description
                  + " did not answer whether it enables TTL nodes: "
                  + KeeperException.create(code).getMessage(),
              null);
    };
  }

  /**
   * Opens a backend on a new Curator client for a {@code zookeeper://} URI.
   *
   * @param uri the URI (see {@link ZooKeeperBackendProvider})
   * @param context the engine's context
   * @return the open backend, connected
   * @throws IllegalArgumentException if the URI is malformed
   * @throws BackendUnavailableException if the ensemble cannot be reached within the operation
   *     timeout
   */
  public static ZooKeeperBackend open(URI uri, BackendContext context) {
    ZooKeeperSettings settings = ZooKeeperSettings.parse(uri);
    // Below the operation timeout: a call Curator holds back while disconnected then fails with
    // CONNECTIONLOSS (a waiting acquire waits on) before the engine's own bound ends the whole
    // acquire with BackendTimeoutException.
    Duration connectionTimeout =
        Objects.requireNonNullElse(
            settings.connectionTimeout(), context.operationTimeout().multipliedBy(3).dividedBy(4));
    CuratorFrameworkFactory.Builder builder =
        CuratorFrameworkFactory.builder()
            .connectString(settings.hosts())
            .sessionTimeoutMs((int) settings.sessionTimeout().toMillis())
            .connectionTimeoutMs((int) connectionTimeout.toMillis())
            .retryPolicy(new RetryNTimes(0, 0));
    String credentials = settings.credentials();
    if (credentials != null) {
      builder
          .authorization("digest", credentials.getBytes(StandardCharsets.UTF_8))
          .aclProvider(CREATOR_ONLY);
    }
    return new ZooKeeperBackend(
        builder.build(),
        true,
        settings.namespace(),
        settings.description(),
        settings.identity(),
        settings.layout(),
        context);
  }

  /** Every node gets the ACL "all rights to the authenticated creator". */
  private static final ACLProvider CREATOR_ONLY =
      new ACLProvider() {
        @Override
        public List<ACL> getDefaultAcl() {
          return ZooDefs.Ids.CREATOR_ALL_ACL;
        }

        @Override
        public List<ACL> getAclForPath(String path) {
          return ZooDefs.Ids.CREATOR_ALL_ACL;
        }
      };

  /**
   * Starts a backend over a Curator client of the application's own. latchkey uses the client as it
   * is (its connection, retry policy, ACL provider and authentication) and never closes it; the
   * client must be started. Its retry policy should not retry: a create that Curator re-sends after
   * a lost connection may leave a second node for one owner, which waits in the queue until its
   * place runs out.
   *
   * @param client a started Curator client
   * @return a builder
   */
  public static Builder builder(CuratorFramework client) {
    return new Builder(client);
  }

  /** Configures a backend over an application's Curator client. */
  public static final class Builder {
    private final CuratorFramework client;
    private String namespace = DEFAULT_NAMESPACE;
    private LockLayout layout = LockLayout.LATCHKEY;

    private Builder(CuratorFramework client) {
      this.client = Objects.requireNonNull(client, "client");
    }

    /**
     * @param namespace the node under which latchkey keeps its records, relative to the client's
     *     own namespace, e.g. {@code latchkey} (the default) or {@code orders/locks}
     * @return this builder
     */
    public Builder namespace(String namespace) {
      Objects.requireNonNull(namespace, "namespace");
      if (namespace.isEmpty() || namespace.startsWith("/") || namespace.endsWith("/")) {
        throw new IllegalArgumentException(
            "namespace must be a relative path like 'latchkey', was '" + namespace + "'");
      }
      this.namespace = namespace;
      return this;
    }

    /**
     * @param layout where locks live and how their nodes are named: {@link LockLayout#LATCHKEY}
     *     (the default), or a Curator layout, in which a lock's name is its path under the
     *     namespace and latchkey's locks exclude Curator's recipe on that path
     * @return this builder
     */
    public Builder layout(LockLayout layout) {
      this.layout = Objects.requireNonNull(layout, "layout");
      return this;
    }

    /**
     * @return what {@link io.latchkey.Latchkey#using} takes: each client it opens shares the
     *     application's Curator client (and so its session)
     */
    public BackendFactory build() {
      String base = client.getNamespace();
      String fullNamespace = base == null || base.isEmpty() ? namespace : base + "/" + namespace;
      String connectString = client.getZookeeperClient().getCurrentConnectionString();
      String description =
          ZooKeeperSettings.SCHEME
              + "://"
              + connectString
              + "/"
              + fullNamespace
              + (layout == LockLayout.LATCHKEY ? "" : "?layout=" + layout.option());
      LockLayout chosen = layout;
      return context ->
          new ZooKeeperBackend(
              client, false, fullNamespace, description, description, chosen, context);
    }
  }

  /*
   * Which session an event concerns. Curator's states carry no session, and they are not only
   * reports of the handle's own: with a client that never retries, every background call that
   * fails with SESSIONEXPIRED makes Curator post LOST, and every one that fails with SESSIONMOVED
   * makes it post RECONNECTED. The answers of an old session's calls can arrive after the handle
   * has a new session, so a session's end can come as a burst of alternating LOST and RECONNECTED,
   * up to one event per call that was on the wire. So no event is taken at its word: each is checked
   * against the session of the handle now. LOST while the handle still has the session this backend
   * knows is a late answer (a session that really expired makes Curator replace the handle before
   * it posts LOST, and it reports the new handle's session in turn); RECONNECTED with the same
   * session resumes only grants that were suspended. A session change is acted on once, when the
   * handle's session first differs from the known one. By then a waiter or an acquire may have used
   * the new session already (the gate reads the handle, not these events), so the end of the old
   * one forgets only its own places and grants, and the engine confirms each grant rather than
   * losing them all: a grant of the ended session has no node any more, one of the new session has.
   * Only when the handle has no session yet is every grant lost at once. When the handle cannot be
   * had (Curator refuses it while a disconnection outlasts the connection timeout), the event is
   * not taken as a session change: the handle was not replaced, so its session did not end there,
   * and a real end is reported again once the handle is replaced.
   */
  private synchronized void sessionChanged(CuratorFramework framework, ConnectionState state) {
    switch (state) {
      case SUSPENDED -> {
        if (!suspended) {
          suspended = true;
          context.events().allSuspended("the ZooKeeper connection is suspended");
        }
      }
      case CONNECTED, RECONNECTED -> {
        OptionalLong now = handleSession();
        if (now.isPresent() && now.getAsLong() != sessionId) {
          sessionEnded(now.getAsLong(), "the ZooKeeper session expired; a new one began");
        } else if (suspended) {
          // The same session (or one that cannot be told now): the engine confirms each grant.
          suspended = false;
          context.events().allResumed();
        }
        gate.reopened();
      }
      case LOST -> {
        // A handle that cannot be had has been disconnected past Curator's timeouts and was not
        // replaced, which a session that really expired would have been: not the handle's end.
        OptionalLong now = handleSession();
        if (now.isPresent() && now.getAsLong() != sessionId) {
          sessionEnded(now.getAsLong(), "the ZooKeeper session was lost");
        }
      }
      default -> {}
    }
  }

  /**
   * The session this backend knew ended.
   *
   * @param now the handle's session now, or 0 if it has none yet
   */
  private void sessionEnded(long now, String reason) {
    sessionId = now;
    suspended = false;
    locks.forgetAllBut(now);
    if (now == 0) {
      context.events().allLost(reason);
      return;
    }
    refreshSessionTimeout();
    context.events().allSuspended(reason);
    context.events().allResumed();
  }

  /**
   * @return the session of the client's handle now, 0 while it has none (a new handle that has not
   *     connected yet); empty if Curator does not hand the handle out (it has been disconnected for
   *     longer than the connection timeout)
   */
  private OptionalLong handleSession() {
    try {
      return OptionalLong.of(client.getZookeeperClient().getZooKeeper().getSessionId());
    } catch (Exception e) {
      return OptionalLong.empty();
    }
  }

  private void refreshSessionTimeout() {
    try {
      sessionTimeoutMillis = client.getZookeeperClient().getZooKeeper().getSessionTimeout();
    } catch (Exception e) {
      // Keep the last negotiated timeout.
    }
  }

  long sessionTimeoutMillis() {
    return sessionTimeoutMillis;
  }

  @Override
  public String description() {
    return description;
  }

  @Override
  public String identity() {
    return identity;
  }

  /**
   * {@link #FEATURES}, and {@link Feature#PERMIT_LEASE_TIME} if the server took a TTL node when the
   * backend opened.
   */
  @Override
  public Set<Feature> features() {
    return features;
  }

  @Override
  public Optional<String> missingFeatureReason(Feature feature) {
    return feature == Feature.PERMIT_LEASE_TIME && !features.contains(feature)
        ? Optional.of(NO_TTL_NODES)
        : Optional.empty();
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

  /** Offered in the default layout only (see {@link ZooKeeperFenceStore}). */
  @Override
  public Optional<FenceStore> fences() {
    return fences;
  }

  @Override
  public WakeupBus wakeups() {
    return WakeupBus.NONE;
  }

  @Override
  public CompletionStage<RenewResult> renew(Collection<GrantRef> grants, long leaseMillis) {
    Map<GrantRef, CompletableFuture<Boolean>> checks = new HashMap<>();
    for (GrantRef grant : grants) {
      checks.put(grant, confirm(grant));
    }
    return CompletableFuture.allOf(checks.values().toArray(CompletableFuture[]::new))
        .handle(
            (done, ignored) -> {
              Set<GrantRef> gone = new HashSet<>();
              Map<GrantRef, Throwable> failed = new HashMap<>();
              checks.forEach(
                  (grant, check) -> {
                    if (check.isCompletedExceptionally()) {
                      failed.put(grant, failureOf(check));
                    } else if (!check.join()) {
                      gone.add(grant);
                    }
                  });
              return new RenewResult(gone, failed, sessionTimeoutMillis);
            });
  }

  private CompletableFuture<Boolean> confirm(GrantRef grant) {
    if (grant.fencingToken() == GrantRef.ANY_TOKEN) {
      return CompletableFuture.completedFuture(false);
    }
    return grant.type() == ResourceType.LEASED_SEMAPHORE
        ? leasedSemaphores.confirm(grant.name(), grant.holderId(), grant.fencingToken())
        : locks.confirm(grant);
  }

  private static Throwable failureOf(CompletableFuture<?> failed) {
    try {
      failed.join();
      return new IllegalStateException("not failed");
    } catch (CompletionException e) {
      return e.getCause() == null ? e : e.getCause();
    }
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    client.getConnectionStateListenable().removeListener(sessionListener);
    locks.forgetAll();
    closeClient();
  }

  private void closeClient() {
    if (ownsClient) {
      client.close();
    }
  }

  @Override
  public String toString() {
    return "ZooKeeperBackend[" + description + "]";
  }

  private static String localHost() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return "unknown";
    }
  }

  private static long currentPid() {
    return ProcessHandle.current().pid();
  }
}
