package io.latchkey.zookeeper;

import io.latchkey.Feature;
import io.latchkey.PermitInfo;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.WaitingAttempts;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.jspecify.annotations.Nullable;

/**
 * Leased semaphores as lease nodes, in the manner of Curator's {@code InterProcessSemaphoreV2}: the
 * semaphore's node holds the total; each granted permit is a child {@code p-{permit id}} whose
 * creation zxid, plus the base of the data ({@link TokenBase}), is its fencing token. A permit the
 * watchdog renews is an ephemeral node: it lives as long as the session of the client that took it
 * (the watchdog's lease is the engine's bound on trusting it). A permit with an explicit lease is a
 * TTL node ({@link CreateMode#PERSISTENT_WITH_TTL}, the lease as its time to live), which is not
 * tied to the session: the server deletes it once the lease has passed, whether or not its client
 * lives.
 *
 * <p>TTL nodes (ZooKeeper 3.5.3 and later) exist only where every server runs with {@code
 * zookeeper.extendedTypesEnabled=true}; the backend probes for them when it opens and declares
 * {@link io.latchkey.Feature#PERMIT_LEASE_TIME} only if the server takes them. The server's rule:
 * its container manager (on the leader) runs every {@code znode.container.checkIntervalMs} (60 s by
 * default) and deletes a TTL node without children whose last modification time (mtime, set by the
 * server when the node was created or last written) lies more than the TTL behind the server's wall
 * clock. So the node goes between TTL and TTL plus one check interval after its creation (plus the
 * time a delete takes to be applied): the permit is freed up to one interval late, a delay for the
 * next holder, never an overlap, because the holder's lease clock starts before the create is sent,
 * hence ends before the server may delete the node. This assumes, as Redis leases do, that the
 * server's wall clock does not jump forward. The deletion is not checked against the mtime again
 * when it is applied, so a write to a node that is due already does not save it: nothing renews
 * these nodes (the engine renews no explicit lease), and the node's mtime is its creation.
 *
 * <p>A grant is one multi-op: a write of the semaphore's node at the version read (which serialises
 * grants against each other and against changes of the total) and the creation of the permit's
 * node, after counting the children against the total. A release deletes the permit's node; a
 * waiter watches the semaphore's children (the server's deletion of a TTL node wakes it too). A TTL
 * permit that ran out but is not deleted yet still counts against the total until it is deleted.
 *
 * <p>A grant or release that fails on the connection may leave the permit's node behind (in the
 * session, or for its TTL): it is handed to {@link StrandedNodes}, which deletes it once the
 * connection is back. A try's failed permit id is never used again (each acquisition draws fresh
 * ids); a waiting acquisition keeps its id, and its next attempt waits for that delete to be
 * answered ({@link #acquire}); the engine forgot a permit whose release failed: so the delete takes
 * no permit that anyone holds.
 */
final class ZooKeeperLeasedSemaphoreStore implements LeasedSemaphoreStore {
  private static final int ATTEMPTS = 64;

  /** A permit without a TTL: an ephemeral node. */
  private static final long SESSION_BOUND = -1;

  /** The field of a permit's data that names the client that took it. */
  private static final String CLIENT_FIELD = "client";

  /** The field of a TTL permit's data that holds its lease (its time to live). */
  private static final String LEASE_FIELD = "leaseMs";

  /** The field of an ephemeral permit's data that holds its client's session timeout. */
  private static final String SESSION_TIMEOUT_FIELD = "sessionTimeoutMs";

  private final ZooKeeperCalls calls;
  private final ZooKeeperCounters counters;
  private final LongSupplier sessionTimeoutMillis;
  private final StrandedNodes stranded;
  private final ConnectionGate gate;
  private final boolean ttlNodes;
  private final String description;
  private final ClientIdentity self;
  private final TokenBase tokenBase;

  /**
   * @param ttlNodes whether the server takes TTL nodes (else an explicit lease is refused)
   * @param description the backend's description, for a refusal
   * @param self who this client is, written into the permits it takes
   * @param tokenBase the base of the permits' tokens
   */
  ZooKeeperLeasedSemaphoreStore(
      ZooKeeperCalls calls,
      ZooKeeperCounters counters,
      LongSupplier sessionTimeoutMillis,
      StrandedNodes stranded,
      ConnectionGate gate,
      boolean ttlNodes,
      String description,
      ClientIdentity self,
      TokenBase tokenBase) {
    this.calls = calls;
    this.counters = counters;
    this.sessionTimeoutMillis = sessionTimeoutMillis;
    this.stranded = stranded;
    this.gate = gate;
    this.ttlNodes = ttlNodes;
    this.description = description;
    this.self = self;
    this.tokenBase = tokenBase;
  }

  @Override
  public CompletableFuture<Boolean> trySetPermits(String name, int permits) {
    return counters.setOnce(ZooKeeperPaths.leasedSemaphore(name), permits);
  }

  @Override
  public CompletableFuture<Void> addPermits(String name, int delta) {
    return counters.addPermits(
        ZooKeeperPaths.leasedSemaphore(name), "leased semaphore '" + name + "'", delta);
  }

  /** A permit the watchdog renews: an ephemeral node, valid for the session timeout at most. */
  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String name, String permitId, long leaseMillis) {
    return acquire(name, permitId, SESSION_BOUND);
  }

  /** A permit with an explicit lease: a TTL node whose time to live is the lease. */
  @Override
  public CompletableFuture<AcquireResult> tryAcquireWithLease(
      String name, String permitId, long leaseMillis) {
    if (!ttlNodes) {
      return CompletableFuture.failedFuture(
          new UnsupportedFeatureException(
              Feature.PERMIT_LEASE_TIME, description, ZooKeeperBackend.NO_TTL_NODES));
    }
    return acquire(name, permitId, leaseMillis);
  }

  /**
   * One attempt of an acquisition. One of a wait ({@link WaitingAttempts}) goes through the
   * connection gate ({@link ConnectionGate#waiting}): it is busy until the connection is back while
   * it is down or when a call fails on it, and the engine tries again within the wait. Its calls
   * may be made again: the reads change nothing, and a grant that failed on the connection left its
   * node (if the server applied it) to {@link StrandedNodes}, whose delete the acquisition's next
   * attempt waits for before it looks for its permit, since it keeps its permit id and would make
   * the node at the same path again (a node left from the expired session is gone already, and the
   * delete answers so). So a wait outlasts a blip or a session's end with no permit held for
   * nobody.
   *
   * @param ttlMillis the permit node's time to live, or {@link #SESSION_BOUND}
   */
  private CompletableFuture<AcquireResult> acquire(String name, String permitId, long ttlMillis) {
    boolean waits = WaitingAttempts.take();
    String permit = ZooKeeperPaths.permit(name, permitId);
    Supplier<CompletableFuture<AcquireResult>> once =
        () -> {
          CompletableFuture<Void> deleting = stranded.deleting(permit);
          if (deleting != null) {
            return CompletableFuture.completedFuture(AcquireResult.busyUntil(deleting));
          }
          return stranded.onConnectionLoss(
              attempt(name, permitId, ttlMillis, 0), permit, -1, code -> {});
        };
    return waits ? gate.waiting(once, ConnectionGate::busyUntilBack) : once.get();
  }

  /**
   * @param ttlMillis the permit node's time to live, or {@link #SESSION_BOUND}
   */
  private CompletableFuture<AcquireResult> attempt(
      String name, String permitId, long ttlMillis, int round) {
    if (round >= ATTEMPTS) {
      return CompletableFuture.failedFuture(
          new ConcurrentModificationException("leased semaphore '" + name + "' kept changing"));
    }
    String semaphore = ZooKeeperPaths.leasedSemaphore(name);
    String permit = ZooKeeperPaths.permit(name, permitId);
    String permitNode = permit.substring(permit.lastIndexOf('/') + 1);
    return counters
        .read(semaphore)
        .thenCompose(
            total ->
                calls
                    .children(semaphore)
                    .thenCompose(
                        children -> {
                          if (children.contains(permitNode)) {
                            return existing(permit, name, permitId, ttlMillis, round);
                          }
                          if (!total.exists() || children.size() >= total.value()) {
                            return calls
                                .watchChildren(semaphore)
                                .thenApply(watch -> AcquireResult.busyUntil(watch.fired()));
                          }
                          return take(semaphore, total, permit, ttlMillis)
                              .thenCompose(
                                  code ->
                                      switch (code) {
                                        case OK ->
                                            grantOf(permit, name, permitId, ttlMillis, round);
                                        case NODEEXISTS ->
                                            existing(permit, name, permitId, ttlMillis, round);
                                        default -> attempt(name, permitId, ttlMillis, round + 1);
                                      });
                        }));
  }

  private CompletableFuture<KeeperException.Code> take(
      String semaphore, ZooKeeperCounters.Counter total, String permit, long ttlMillis) {
    return calls
        .send(
            (callback, on) -> {
              List<CuratorOp> ops =
                  List.of(
                      calls
                          .client()
                          .transactionOp()
                          .setData()
                          .withVersion(total.version())
                          .forPath(semaphore, ZooKeeperCounters.format(total.value())),
                      ttlMillis == SESSION_BOUND
                          ? calls
                              .client()
                              .transactionOp()
                              .create()
                              .withMode(CreateMode.EPHEMERAL)
                              .forPath(permit, permitData(ttlMillis))
                          : calls
                              .client()
                              .transactionOp()
                              .create()
                              .withTtl(ttlMillis)
                              .withMode(CreateMode.PERSISTENT_WITH_TTL)
                              .forPath(permit, permitData(ttlMillis)));
              calls.client().transaction().inBackground(callback, on).forOperations(ops);
            })
        .thenApply(
            event -> {
              KeeperException.Code code = ZooKeeperCalls.code(event);
              if (code != KeeperException.Code.OK
                  && code != KeeperException.Code.BADVERSION
                  && code != KeeperException.Code.NODEEXISTS
                  && code != KeeperException.Code.NONODE) {
                throw new java.util.concurrent.CompletionException(ZooKeeperCalls.failure(event));
              }
              return code;
            });
  }

  /**
   * A permit node's data, as {@link NodeFields} for an operator's {@code zkCli get} and for {@link
   * ZooKeeperAdminStore}: who took it and, for a TTL node, its lease (the server shows clients no
   * owner or time to live for a TTL node), else the session timeout of the client that took it (how
   * long the ephemeral node outlives that client, which the server does not show either).
   */
  private byte[] permitData(long ttlMillis) {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put(CLIENT_FIELD, self.clientId());
    fields.put("host", self.host());
    fields.put("pid", self.pid());
    if (ttlMillis == SESSION_BOUND) {
      fields.put(SESSION_TIMEOUT_FIELD, sessionTimeoutMillis.getAsLong());
    } else {
      fields.put(LEASE_FIELD, ttlMillis);
    }
    return NodeFields.encode(fields);
  }

  /**
   * Reads a permit node back for the operator's view ({@link ZooKeeperAdminStore} documents the
   * remaining lease it shows).
   *
   * @param node the permit's node name ({@code p-{permit id}})
   * @param read the node's data and stat
   * @param now the server's clock, read before the node
   * @param base the base of the permit's token ({@link TokenBase})
   * @return the permit, or null if its explicit lease has run out
   */
  static @Nullable PermitInfo permitInfo(
      String node, ZooKeeperCalls.Read read, long now, long base) {
    Map<String, String> fields = NodeFields.decode(read.data());
    long created = read.stat().getMtime(); // never written after its creation
    String lease = fields.get(LEASE_FIELD);
    long remaining;
    if (lease != null) {
      long leaseMillis = Long.parseLong(lease);
      // Capped: a node made after the clock was read would otherwise show more than its lease.
      remaining = Math.min(leaseMillis, created + leaseMillis - now);
      if (remaining <= 0) {
        return null;
      }
    } else {
      remaining = Long.parseLong(fields.getOrDefault(SESSION_TIMEOUT_FIELD, "0"));
    }
    return new PermitInfo(
        ZooKeeperPaths.name(node.substring(ZooKeeperPaths.PERMIT_PREFIX.length())),
        fields.getOrDefault(CLIENT_FIELD, ""),
        Duration.ofMillis(remaining),
        base + read.stat().getCzxid());
  }

  /**
   * The permit's node was there before this attempt's create: an earlier attempt of this
   * acquisition made it and its answer was lost (permit ids are fresh per acquisition, and the
   * engine registered no grant of it). An ephemeral node is taken as the grant: the session bounds
   * it as it bounds any. A TTL node is not: its time to live runs from the earlier create, before
   * this attempt's lease clock started, so it is deleted and the permit taken anew.
   */
  private CompletableFuture<AcquireResult> existing(
      String permit, String name, String permitId, long ttlMillis, int round) {
    if (ttlMillis == SESSION_BOUND) {
      return grantOf(permit, name, permitId, ttlMillis, round);
    }
    return calls
        .delete(permit, -1)
        .thenCompose(deleted -> attempt(name, permitId, ttlMillis, round + 1));
  }

  /**
   * The permit's node is there, made by this attempt: its creation zxid plus the base of the data
   * ({@link TokenBase}) is the token. An ephemeral node is trusted for the session timeout at most;
   * a TTL node for its lease, which the engine keeps.
   */
  private CompletableFuture<AcquireResult> grantOf(
      String permit, String name, String permitId, long ttlMillis, int round) {
    return calls
        .stat(permit)
        .thenCompose(
            stat ->
                stat == null
                    ? attempt(name, permitId, ttlMillis, round + 1)
                    : tokenBase
                        .current()
                        .thenApply(
                            base ->
                                ttlMillis == SESSION_BOUND
                                    ? AcquireResult.grantedFor(
                                        base + stat.getCzxid(), 1, sessionTimeoutMillis.getAsLong())
                                    : AcquireResult.granted(base + stat.getCzxid(), 1)));
  }

  @Override
  public CompletableFuture<Boolean> release(String name, String permitId) {
    String permit = ZooKeeperPaths.permit(name, permitId);
    return stranded
        .onConnectionLoss(calls.delete(permit, -1), permit, -1, code -> {})
        .thenApply(code -> code == KeeperException.Code.OK);
  }

  @Override
  public CompletableFuture<Integer> availablePermits(String name) {
    String semaphore = ZooKeeperPaths.leasedSemaphore(name);
    return counters
        .read(semaphore)
        .thenCompose(
            total ->
                calls
                    .children(semaphore)
                    .thenApply(children -> (int) (total.value() - children.size())));
  }

  /**
   * @return whether a permit grant is still on record with its token (a token of another life of
   *     the data is not: it is below the base)
   */
  CompletableFuture<Boolean> confirm(String name, String permitId, long token) {
    return tokenBase
        .current()
        .thenCompose(
            base ->
                calls
                    .stat(ZooKeeperPaths.permit(name, permitId))
                    .thenApply(stat -> stat != null && base + stat.getCzxid() == token));
  }
}
