package io.latchkey.zookeeper;

import io.latchkey.LockMode;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HandOverResult;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ReleaseResult;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BiPredicate;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * Locks on ephemeral sequential nodes: one node per owner in the lock's directory, which is the
 * owner's place in the queue and, once it is at the front, its grant.
 *
 * <p>How it works. An owner's first attempt creates its node ({@code lk-{owner digest}-__WRIT__} or
 * {@code __READ__}, data: owner, client, host, pid, and the holds it asks for) and lists the
 * directory. A node that holds or asks for the exclusive side holds the lock when it is first; any
 * other node when no such node is ahead of it ({@link LockQueue}'s rule: ZooKeeper's order is first
 * come, first served, so every lock is fair and a queued writer blocks new readers). A node that
 * does not hold the lock waits: the answer carries a watch on the one node it waits for (the node
 * just ahead for a writer, the nearest writer ahead for a reader), so that a release wakes one
 * waiter, not a herd. The node stays as the owner's queue place; its next attempt finds it by the
 * owner's digest and takes the grant when it reaches the front, without writing anything: an
 * uncontended acquire and release cost one create and one delete.
 *
 * <p>The listing is sent right behind the create, without waiting for its answer, so that an
 * uncontended acquire takes one round trip. ZooKeeper executes one session's requests in the order
 * they were sent, and a server holds a session's read until the session's earlier writes are
 * applied (its {@code CommitProcessor}, a follower's too), so the listing normally shows the new
 * node. It is only taken as the listing after the create when it proves so: the directory's {@code
 * pzxid} (the zxid of its last change of children) is at least the node's creation zxid. Else (the
 * create had to make the directory first, and Curator sent it again after the listing; Curator
 * queued the calls while disconnected; the listing failed) the directory is listed again once the
 * create is answered, as if nothing had been sent behind it.
 *
 * <p>The fencing token of a grant is its node's creation zxid: grants of one name are made in node
 * order, which is creation order, and zxids grow across the whole ensemble, leader fail-overs
 * included. Above the base of the data ({@link TokenBase}), so that tokens keep growing when the
 * server is restarted empty; the base is added where a grant leaves this store and taken off a
 * grant that comes back to it (a release, a confirmation), so that everything here compares node
 * tokens. Plus an offset, once a quorum raised the lock ({@link LockFence}, docs/adr/0009): the
 * listing that finds a node at the front also shows the lock's fence record, and a node whose
 * offset (in its data) is not the record's takes the record's in the write that claims it, before
 * it is a grant. That write is a multi-op that also checks the directory's version is still the
 * listing's: a raise writes the directory, so a raise after the listing fails the claim, and the
 * next listing shows its record ({@link #claim}). A lock never raised has no record, its nodes no
 * offset: nothing is read or written for it. A node is created with the offset this client last saw
 * for its lock, so that a raised lock costs no write either once the client knows its record. A
 * re-entry adds a hold to the node's data (a versioned write) and keeps the token; the owner's
 * digest in the node's name lets another process holding the same owner token find the node and
 * re-enter it rather than make a second one. A release takes one hold off by a versioned write, and
 * deletes the node with the last one; the version is the one this client kept from its own last
 * write of the node, so a release sends no read first (a node changed by another process of the
 * owner token answers BADVERSION and is read then). Only for this client's thread owners, whose ids
 * no other process can have: a lock directory is a container that the server removes once empty,
 * and a remade directory numbers its nodes from zero again, so a node of an owner token that
 * another process made could have the kept node's name and version. Token owners read first.
 *
 * <p>A release of the last hold that fails on the connection is handed to {@link StrandedNodes}:
 * the node would otherwise hold the lock for the life of the session, which outlives the blip. Its
 * delete is sent again when the connection is back, at the version this client knew, so that a node
 * its owner re-entered meanwhile stays.
 *
 * <p>Queue places this client made are kept in {@link #queued} until the owner is granted or
 * leaves. A place whose owner stops retrying for its keep-alive, or that was woken (its watch
 * fired) and not retried within its hand-off, is deleted by a timer on the engine's scheduler: a
 * live client that forgot a waiter does not block the lock for the life of its session. A dead
 * client's places go with its session.
 *
 * <p>Layouts ({@link LockLayout}) choose the directory and the node names; the rule above is the
 * same in each. Nodes that are not latchkey's (a Curator recipe's on the same path) take part as
 * holders or waiters with unknown owners, exclusive unless named with Curator's read marker. With
 * Curator's semaphore mutex, the front of the queue is also held back while any of Curator's lease
 * nodes exists, and such a waiter watches the leases' directory.
 *
 * <p>Waiting through a lost connection. A waiting attempt (one with a queue keep-alive) that finds
 * the connection down sends nothing and answers "busy until the connection is back" ({@link
 * ConnectionGate}); one whose call fails on the connection answers the same. The engine retries
 * then, within its wait. What such a call did may be unknown, so the acquire path is built to be
 * repeated safely:
 *
 * <ul>
 *   <li>A waiting owner's place is entered in {@link #queued} before its node is created, with the
 *       random creation id the node's data will carry; until the owner is handed its grant, a node
 *       in {@link #queued} is a place, never a grant, whatever its data says. A create whose answer
 *       was lost is settled by the next attempt: after a {@code sync}, the owner's node that
 *       carries the creation id is the place; if there is none, the create was not applied (the
 *       session moved, so a request of the old connection can no longer be applied).
 *   <li>Taking the grant (clearing {@code waiting}) changes no hold count, so it may be done again;
 *       the place stays in {@link #queued} until its answer came.
 *   <li>A re-entry's write adds a hold: it is never repeated, and its failure fails the call (ADR
 *       0007: no proof, no undo). A re-entry never waits, so no wait is cut short by this.
 *   <li>A place whose owner gave up, or whose keep-alive ran out, is deleted; a delete that fails
 *       on the connection is sent again when the connection is back, as long as the session lives
 *       (the place stays in {@link #queued}, marked leaving, and its owner's next attempt finishes
 *       the delete before anything else). The end of a session forgets the places and grants made
 *       in it (each records its session), and only those: their nodes are gone with it, and a
 *       waiter starts over with a fresh node, while a place or grant the client already made in its
 *       new session stays whatever late report of the old session's end comes after it.
 * </ul>
 */
final class ZooKeeperLockStore implements LockStore {
  /** How often an attempt starts over after the directory changed under it. */
  private static final int ATTEMPTS = 32;

  private final ZooKeeperCalls calls;
  private final ClientIdentity self;
  private final LongSupplier sessionTimeoutMillis;
  private final LongSupplier sessionId;
  private final TokenBase tokenBase;
  private final ScheduledExecutorService scheduler;
  private final ConnectionGate gate;
  private final StrandedNodes stranded;
  private final LockLayout layout;
  private final Map<String, QueuePlace> queued = new ConcurrentHashMap<>();
  private final Map<String, Held> grants = new ConcurrentHashMap<>();

  /**
   * Lock directories where this client last saw other nodes: its next waiter there is created with
   * its waiting mark, so that it costs no second write to mark it. Only a hint: a wrong guess costs
   * one write (a mark, or a claim), never a wrong answer.
   */
  private final Set<String> busyDirs = ConcurrentHashMap.newKeySet();

  /** How many busy directories are remembered before the hint starts over. */
  private static final int BUSY_DIRS = 4096;

  /**
   * The fence records this client last saw in lock directories (only those that have one): a new
   * node there is created with the record's offset, so that it costs no write to raise it when it
   * is claimed. Only a hint, like {@link #busyDirs}: a stale one costs a write, never a wrong
   * token.
   */
  private final Map<String, LockFence> fences = new ConcurrentHashMap<>();

  ZooKeeperLockStore(
      ZooKeeperCalls calls,
      ClientIdentity self,
      LongSupplier sessionTimeoutMillis,
      LongSupplier sessionId,
      TokenBase tokenBase,
      ScheduledExecutorService scheduler,
      ConnectionGate gate,
      StrandedNodes stranded,
      LockLayout layout) {
    this.calls = calls;
    this.sessionId = sessionId;
    this.tokenBase = tokenBase;
    this.layout = layout;
    this.self = self;
    this.sessionTimeoutMillis = sessionTimeoutMillis;
    this.scheduler = scheduler;
    this.gate = gate;
    this.stranded = stranded;
  }

  /**
   * A node of this client, as this client last wrote it: a grant (kept until released), or a queue
   * place. The release (or claim) writes with this version instead of reading the node first: a
   * node changed meanwhile answers BADVERSION and is read then, one gone answers NONODE.
   *
   * @param path the node
   * @param token its fencing token: its creation zxid plus its data's offset
   * @param version its data version after this client's last write
   * @param data its data after that write
   * @param session the session the node lives in (its ephemeral owner)
   */
  private record Held(String path, long token, int version, LockNodeData data, long session) {
    long czxid() {
      return token - data.offset();
    }
  }

  /**
   * A lock directory as a listing saw it: its fence record, and its data version, which only a
   * raise of the fence record changes (it writes the directory in the same multi-op).
   *
   * @param fence the fence record, or {@link LockFence#NONE}
   * @param version the directory's data version, or -1 if it did not exist
   */
  private record Seen(LockFence fence, int version) {}

  /**
   * What a queue place waits for, as the listing that placed it saw it.
   *
   * @param node the node just ahead of it (a writer), or the nearest writer ahead (a reader)
   * @param seen the directory in that listing
   */
  private record Behind(String node, Seen seen) {}

  /**
   * Whether a node holds the lock and, if not, what it waits for: a node ahead of it in the
   * directory, or (Curator's semaphore mutex) the leases of Curator's holders.
   *
   * @param watched the path to watch, or null
   * @param children whether the watched path's children are what it waits for
   * @param watchedVersion the data version of the watched node as read to place the node behind it
   *     (a reader's writer, which holds readers back by its data), or -1 if it holds the node back
   *     whatever its data says
   */
  private record Position(
      boolean holding, @Nullable String watched, boolean children, int watchedVersion) {
    static final Position HOLDING = new Position(true, null, false, -1);

    static Position behind(String dir, String node, int version) {
      return new Position(false, dir + "/" + node, false, version);
    }
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(LockRequest request) {
    if (request.queueKeepAliveMillis() > 0) {
      return gate.waiting(() -> attemptFirst(request, true), back -> offline(request, back));
    }
    // A try that will not wait fails on a lost connection, as any other call does.
    return attemptFirst(request, false)
        .exceptionallyCompose(
            failure -> CompletableFuture.failedFuture(ConnectionGate.cause(failure)));
  }

  /**
   * Reads the base of the tokens first, if this session has not ({@link TokenBase}): a failure then
   * comes before anything is written, and the grant's token needs no request after its write.
   */
  private CompletableFuture<AcquireResult> attemptFirst(LockRequest request, boolean waits) {
    return tokenBase.current().thenCompose(base -> attemptWithBase(request, waits));
  }

  private CompletableFuture<AcquireResult> attemptWithBase(LockRequest request, boolean waits) {
    QueuePlace leaving = queued.get(key(request.name(), request.owner()));
    if (leaving != null && leaving.isLeaving()) {
      // The owner's node that is being deleted goes first: found by a listing, it would pass for
      // the owner's own (its path may not be known yet).
      return finishLeaving(leaving).thenCompose(done -> tryAcquire(request));
    }
    return waits
        ? settle(request).thenCompose(settled -> firstAttempt(request))
        : attempt(request, 0);
  }

  /**
   * Deletes a place being left now.
   *
   * @return completes when it is gone; fails with CONNECTIONLOSS if its delete must wait for the
   *     connection
   */
  private CompletableFuture<Void> finishLeaving(QueuePlace place) {
    return deleteLeaving(place)
        .thenCompose(
            done ->
                queued.get(place.key) == place
                    ? CompletableFuture.failedFuture(
                        KeeperException.create(KeeperException.Code.CONNECTIONLOSS))
                    : CompletableFuture.completedFuture(null));
  }

  /**
   * A waiting owner of whom this client keeps no node (no grant, no queue place) creates its node
   * before it lists the directory, as Curator does: an uncontended acquire is then one create and
   * one listing, sent together ({@link #create}). Another process of the owner token may have a
   * node already; the listing shows it, and the new node gives way to it ({@link #placed}).
   */
  private CompletableFuture<AcquireResult> firstAttempt(LockRequest request) {
    String key = key(request.name(), request.owner());
    if (queued.containsKey(key) || grants.containsKey(key)) {
      return attempt(request, 0);
    }
    String dir = layout.dir(request.name());
    return create(
        request, dir, ZooKeeperPaths.ownerDigest(request.owner()), busyDirs.contains(dir), 0);
  }

  private void noteBusy(String dir, boolean busy) {
    if (!busy) {
      busyDirs.remove(dir);
      return;
    }
    if (busyDirs.size() >= BUSY_DIRS) {
      busyDirs.clear();
    }
    busyDirs.add(dir);
  }

  /**
   * Keeps the fence record a listing of a directory shows, if it has one, for the next node created
   * there.
   *
   * @return the record, or {@link LockFence#NONE}
   */
  private LockFence noteFence(String dir, List<String> children) {
    LockFence fence = LockFence.of(children);
    if (fence.equals(LockFence.NONE)) {
      if (!fences.isEmpty()) {
        fences.remove(dir);
      }
      return fence;
    }
    if (fences.size() >= BUSY_DIRS) {
      fences.clear();
    }
    fences.put(dir, fence);
    return fence;
  }

  /**
   * A lock directory listed after a node of this client was made or claimed in it.
   *
   * @param nodes the nodes in queue order
   * @param seen the directory as the listing saw it
   * @param mine that node, or null if it is gone
   */
  private record Listed(List<LockNode> nodes, Seen seen, @Nullable LockNode mine) {}

  private CompletableFuture<Listed> listWith(String dir, String path) {
    return calls.list(dir).thenApply(listing -> listed(dir, listing, path));
  }

  private Listed listed(String dir, ZooKeeperCalls.Listing listing, String path) {
    List<LockNode> nodes = LockNode.sorted(listing.children());
    return new Listed(nodes, seen(dir, listing), named(nodes, path));
  }

  /**
   * The directory listed after the owner's new node was created: the listing sent behind the
   * create, if it was read after the create was applied; else a new listing.
   *
   * @param sentBehind the listing sent right behind the create, whatever came of it
   */
  private CompletableFuture<Listed> listedAfter(
      String dir, NewNode node, CompletableFuture<ZooKeeperCalls.Listing> sentBehind) {
    return sentBehind
        // A failed listing proves nothing, as one of a missing directory.
        .exceptionally(failure -> new ZooKeeperCalls.Listing(List.of(), -1, -1))
        .thenCompose(
            listing ->
                listing.childrenZxid() >= node.czxid()
                    ? CompletableFuture.completedFuture(listed(dir, listing, node.path()))
                    : listWith(dir, node.path()));
  }

  /**
   * Keeps what a listing of a lock directory shows ({@link #noteFence}).
   *
   * @return the directory as the listing saw it
   */
  private Seen seen(String dir, ZooKeeperCalls.Listing listing) {
    return new Seen(noteFence(dir, listing.children()), listing.version());
  }

  private static Held held(String path, Stat stat, LockNodeData data) {
    return new Held(
        path, data.token(stat.getCzxid()), stat.getVersion(), data, stat.getEphemeralOwner());
  }

  private static Held held(String path, NewNode node, LockNodeData data) {
    return new Held(path, data.token(node.czxid()), node.version(), data, node.session());
  }

  /**
   * The connection is down (or a call failed on it): busy until it is back. The owner's place, if
   * it has one, is kept alive: the owner is still there, only the connection is not.
   */
  private AcquireResult offline(LockRequest request, @Nullable CompletableFuture<Void> back) {
    QueuePlace place = queued.get(key(request.name(), request.owner()));
    if (place != null && !place.isLeaving()) {
      place.attempted(request);
      schedule(place);
    }
    return ConnectionGate.busyUntilBack(back);
  }

  /**
   * Settles the owner's create whose answer was lost with the connection: its place learns its
   * node, or goes if the create was not applied.
   */
  private CompletableFuture<Void> settle(LockRequest request) {
    String key = key(request.name(), request.owner());
    QueuePlace place = queued.get(key);
    if (place == null || place.path() != null || place.isLeaving()) {
      return CompletableFuture.completedFuture(null);
    }
    return locate(place)
        .thenAccept(
            path -> {
              if (path == null) {
                leave(key, place);
              }
            });
  }

  /**
   * The node of a place: known once its create was answered; else the owner's node that carries the
   * place's creation id, looked for after a {@code sync}, so that a create the ensemble applied is
   * seen even if this client's server had not applied it yet.
   *
   * @return its path, or null if the create was not applied
   */
  private CompletableFuture<@Nullable String> locate(QueuePlace place) {
    String known = place.path();
    if (known != null) {
      return CompletableFuture.completedFuture(known);
    }
    return calls
        .sync(place.dir)
        .thenCompose(synced -> calls.children(place.dir))
        .thenCompose(
            children ->
                ownersNodeWhere(
                    place.dir,
                    place.digest,
                    children,
                    (stat, data) -> place.creation.equals(data.creation())))
        .thenApply(
            path -> {
              if (path != null) {
                place.located(path);
              }
              return path;
            });
  }

  /**
   * The first of an owner's nodes in a directory, in queue order, whose stat and data match.
   *
   * @return its path, or null if none does
   */
  private CompletableFuture<@Nullable String> ownersNodeWhere(
      String dir, String digest, List<String> children, BiPredicate<Stat, LockNodeData> matches) {
    List<String> paths =
        LockNode.sorted(children).stream()
            .filter(node -> digest.equals(node.ownerDigest()))
            .map(node -> dir + "/" + node.name())
            .toList();
    return firstWhere(paths, 0, matches);
  }

  private CompletableFuture<@Nullable String> firstWhere(
      List<String> paths, int index, BiPredicate<Stat, LockNodeData> matches) {
    if (index >= paths.size()) {
      return CompletableFuture.completedFuture(null);
    }
    String path = paths.get(index);
    return calls
        .read(path)
        .thenCompose(
            read ->
                read != null && matches.test(read.stat(), LockNodeData.decode(read.data()))
                    ? CompletableFuture.completedFuture(path)
                    : firstWhere(paths, index + 1, matches));
  }

  private CompletableFuture<AcquireResult> attempt(LockRequest request, int round) {
    if (round >= ATTEMPTS) {
      return CompletableFuture.failedFuture(
          new ConcurrentModificationException(
              "lock '" + request.name() + "' kept changing during " + ATTEMPTS + " attempts"));
    }
    String dir = layout.dir(request.name());
    String digest = ZooKeeperPaths.ownerDigest(request.owner());
    return calls
        .list(dir)
        .thenCompose(
            listing -> {
              List<LockNode> nodes = LockNode.sorted(listing.children());
              Seen seen = seen(dir, listing);
              QueuePlace place = queued.get(key(request.name(), request.owner()));
              String placePath = place == null ? null : place.path();
              LockNode mine = placePath == null ? null : named(nodes, placePath);
              if (mine == null) {
                mine = ownersNode(nodes, digest);
              }
              if (mine == null) {
                return fresh(request, dir, digest, nodes, round);
              }
              return existing(request, dir, nodes, seen, mine, round);
            });
  }

  /** The owner has a node: its queue place, or its grant. */
  private CompletableFuture<AcquireResult> existing(
      LockRequest request, String dir, List<LockNode> nodes, Seen seen, LockNode mine, int round) {
    String key = key(request.name(), request.owner());
    String path = dir + "/" + mine.name();
    boolean exclusive = request.mode() == LockMode.EXCLUSIVE;
    QueuePlace waited = queued.get(key);
    Held known = waited == null ? grants.get(key) : waited.known();
    CompletableFuture<@Nullable Held> state =
        known != null && known.path().equals(path) && ownedHereAlone(request.owner())
            ? CompletableFuture.completedFuture(known)
            : calls
                .read(path)
                .thenApply(
                    read ->
                        read == null
                            ? null
                            : held(path, read.stat(), LockNodeData.decode(read.data())));
    return state.thenCompose(
        read -> {
          if (read == null) {
            return attempt(request, round + 1);
          }
          LockNodeData data = read.data();
          long token = read.token();
          int version = read.version();
          QueuePlace place = queued.get(key);
          QueuePlace ours = place != null && path.equals(place.path()) ? place : null;
          if (ours != null && ours.isLeaving()) {
            // The owner's old place, given up and not deleted yet (the connection was lost):
            // finish the delete first.
            return calls
                .delete(path, -1)
                .thenCompose(
                    gone -> {
                      leave(key, ours);
                      return attempt(request, round + 1);
                    });
          }
          if (ours != null && ours.exclusive != exclusive) {
            // The owner now asks for the other side: its old place goes.
            leave(key, ours);
            return calls.delete(path, -1).thenCompose(gone -> attempt(request, round + 1));
          }
          return position(dir, nodes, mine, data.blocksReaders())
              .thenCompose(
                  position -> {
                    noteBusy(dir, !position.holding() || nodes.size() > 1);
                    if (!position.holding()) {
                      return waitBehind(position, ours, request, seen);
                    }
                    if (data.waiting() || ours != null) {
                      // A place (even one whose "waiting" mark was not written) is never a
                      // grant until its owner is handed it.
                      return claim(
                          request,
                          path,
                          data,
                          read.czxid(),
                          version,
                          read.session(),
                          seen,
                          ours,
                          round);
                    }
                    if (exclusive && data.exclusive() == 0) {
                      return CompletableFuture.completedFuture(AcquireResult.upgradeRefused());
                    }
                    LockNodeData more = data.plus(exclusive, 1);
                    return calls
                        .write(path, more.encode(), version)
                        .exceptionallyCompose(
                            failure ->
                                CompletableFuture.failedFuture(
                                    new ConnectionGate.NotRepeatable(failure)))
                        .thenCompose(
                            code -> {
                              if (code != KeeperException.Code.OK) {
                                // The node changed since this client's last write: read it.
                                grants.remove(key, read);
                                return attempt(request, round + 1);
                              }
                              Held reentered =
                                  new Held(path, token, version + 1, more, read.session());
                              grants.put(key, reentered);
                              return granted(reentered, more.holds(exclusive));
                            });
                  });
        });
  }

  /**
   * A waiting node reached the front and its owner came: it becomes the grant. Clearing the mark
   * changes no hold, so it may be repeated: a place this client keeps stays in {@link #queued}
   * (marked as being claimed, so that no timer deletes it) until the answer came, and a claim whose
   * answer was lost is made again by the owner's next attempt. A claim of a node this client does
   * not keep as a place is not repeated: the next attempt could not tell it from a grant.
   *
   * <p>The node takes the offset of the fence record in the listing that found it at the front, and
   * the claim is made only if the directory's version is still that listing's: a raise of the
   * record in between (it writes the directory) may have counted the waiting node as one still to
   * be granted, and its grant must then take the new record's offset; the claim fails, and the next
   * round lists the directory again.
   *
   * @param data the node's data as read
   * @param seen the directory in the listing that found the node at the front
   */
  private CompletableFuture<AcquireResult> claim(
      LockRequest request,
      String path,
      LockNodeData data,
      long czxid,
      int version,
      long session,
      Seen seen,
      @Nullable QueuePlace ours,
      int round) {
    String key = key(request.name(), request.owner());
    if (ours != null && !ours.begin(Step.CLAIMING)) {
      // Given up meanwhile: the next round finishes its delete.
      return attempt(request, round + 1);
    }
    LockNodeData claimed = data.under(seen.fence()).withWaiting(false);
    String dir = path.substring(0, path.lastIndexOf('/'));
    return writeWhile(dir, seen.version(), path, claimed, version)
        .exceptionallyCompose(
            failure -> {
              if (ours == null) {
                return CompletableFuture.failedFuture(new ConnectionGate.NotRepeatable(failure));
              }
              ours.endClaim();
              schedule(ours);
              return CompletableFuture.failedFuture(failure);
            })
        .thenCompose(
            code -> {
              if (code != KeeperException.Code.OK) {
                if (ours != null) {
                  // Changed or gone under it: the next round reads the node.
                  ours.know(null);
                  ours.endClaim();
                  schedule(ours);
                }
                return attempt(request, round + 1);
              }
              if (ours != null) {
                leave(key, ours);
              }
              Held grant = new Held(path, claimed.token(czxid), version + 1, claimed, session);
              grants.put(key, grant);
              return granted(grant, claimed.holds(request.mode() == LockMode.EXCLUSIVE));
            });
  }

  /** The owner has no node: a new holder or a new waiter. */
  private CompletableFuture<AcquireResult> fresh(
      LockRequest request, String dir, String digest, List<LockNode> nodes, int round) {
    boolean exclusive = request.mode() == LockMode.EXCLUSIVE;
    return position(dir, nodes, null, exclusive)
        .thenCompose(
            previewed -> {
              if (!previewed.holding() && request.queueKeepAliveMillis() == 0) {
                // A try that will not wait writes nothing when it can see it would be refused.
                return CompletableFuture.completedFuture(AcquireResult.busy(refusalHint()));
              }
              return create(request, dir, digest, !previewed.holding(), round);
            });
  }

  /**
   * Creates the owner's node, marked waiting if it is expected to wait, and places it. The
   * directory's listing is sent right behind the create, in the same round trip (see the class
   * comment).
   *
   * @param waiting whether to create it with its waiting mark
   */
  private CompletableFuture<AcquireResult> create(
      LockRequest request, String dir, String digest, boolean waiting, int round) {
    boolean exclusive = request.mode() == LockMode.EXCLUSIVE;
    String creation = creationId();
    LockNodeData data = newNodeData(request, dir, waiting, creation);
    QueuePlace place = null;
    if (request.queueKeepAliveMillis() > 0) {
      // Entered before the create, so that a create whose answer is lost is settled
      // by the next attempt (or deleted by the place's timer) rather than orphaned.
      place = placeOf(request, dir, digest, creation);
      enqueue(place, request);
    }
    QueuePlace entered = place;
    CompletableFuture<ZooKeeperCalls.Created> made =
        calls.create(
            dir + "/" + layout.nodePrefix(digest, exclusive),
            data.encode(),
            CreateMode.EPHEMERAL_SEQUENTIAL);
    CompletableFuture<ZooKeeperCalls.Listing> listedBehind = calls.list(dir);
    CompletableFuture<AcquireResult> answer =
        made.thenCompose(
                created -> {
                  String path = created.path();
                  if (entered != null && created.ok() && path != null) {
                    entered.located(path);
                  }
                  return tokenOf(created);
                })
            .thenCompose(
                node -> placed(request, dir, digest, data, node, listedBehind, entered, round));
    if (entered != null) {
      return answer;
    }
    // A try that does not wait keeps no place: if it fails on the connection, its node (created as
    // a grant whose answer was lost, or one it could not delete after a refusal) is found by its
    // creation id and deleted once the connection is back.
    return answer.whenComplete(
        (result, failure) -> {
          if (failure != null && ConnectionGate.isConnectionLoss(ConnectionGate.cause(failure))) {
            strand(placeOf(request, dir, digest, creation));
          }
        });
  }

  /**
   * The data of an owner's new node: the holds it asks for, and the offset of the fence record this
   * client last saw in the directory.
   */
  private LockNodeData newNodeData(
      LockRequest request, String dir, boolean waiting, String creation) {
    boolean exclusive = request.mode() == LockMode.EXCLUSIVE;
    return new LockNodeData(
        request.owner(),
        self.clientId(),
        self.host(),
        self.pid(),
        exclusive ? 1 : 0,
        exclusive ? 0 : 1,
        sessionTimeoutMillis.getAsLong(),
        waiting,
        creation,
        fences.getOrDefault(dir, LockFence.NONE).offset());
  }

  /** The place of the owner's node that is created with this creation id, in this session. */
  private QueuePlace placeOf(LockRequest request, String dir, String digest, String creation) {
    return new QueuePlace(
        key(request.name(), request.owner()),
        dir,
        digest,
        creation,
        request.mode() == LockMode.EXCLUSIVE,
        sessionId.getAsLong());
  }

  /**
   * Hands the node a failed try may have left to the delete that runs once the connection is back.
   * The node is kept as a place being left, so that the owner's next attempt finishes the delete
   * before it looks for its node (it would take that node for its own otherwise).
   */
  private void strand(QueuePlace place) {
    place.begin(Step.LEAVING);
    if (queued.putIfAbsent(place.key, place) == null) {
      deleteWhenBack(place);
    }
  }

  private record NewNode(String path, long czxid, int version, long session) {}

  private CompletableFuture<NewNode> tokenOf(ZooKeeperCalls.Created created) {
    String path = created.path();
    if (!created.ok() || path == null) {
      return CompletableFuture.failedFuture(
          new IllegalStateException("a sequential node already existed: " + created.code()));
    }
    Stat stat = created.stat();
    if (stat != null && stat.getCzxid() > 0) {
      return CompletableFuture.completedFuture(
          new NewNode(path, stat.getCzxid(), stat.getVersion(), stat.getEphemeralOwner()));
    }
    return calls
        .stat(path)
        .thenApply(
            read -> {
              if (read == null) {
                throw new IllegalStateException("the new lock node " + path + " vanished");
              }
              return new NewNode(
                  path, read.getCzxid(), read.getVersion(), read.getEphemeralOwner());
            });
  }

  /**
   * The owner's new node exists: is it at the front? A node created holding (the lock looked free)
   * that another node got ahead of is marked waiting, if that node is still ahead ({@link
   * #markWaiting}; else the next round takes the grant); a node created waiting that is at the
   * front is claimed at once.
   *
   * @param listedBehind the directory's listing sent right behind the node's create
   */
  private CompletableFuture<AcquireResult> placed(
      LockRequest request,
      String dir,
      String digest,
      LockNodeData data,
      NewNode node,
      CompletableFuture<ZooKeeperCalls.Listing> listedBehind,
      @Nullable QueuePlace place,
      int round) {
    String key = key(request.name(), request.owner());
    String path = node.path();
    String nodeName = path.substring(path.lastIndexOf('/') + 1);
    boolean exclusive = request.mode() == LockMode.EXCLUSIVE;
    return listedAfter(dir, node, listedBehind)
        .thenCompose(
            listed -> {
              List<LockNode> nodes = listed.nodes();
              Seen seen = listed.seen();
              LockFence fence = seen.fence();
              LockNode mine = listed.mine();
              if (mine == null) {
                // Deleted at once (force release, or the session ended): start over.
                if (place != null) {
                  leave(key, place);
                }
                return attempt(request, round + 1);
              }
              LockNode first = ownersNode(nodes, digest);
              if (first != null && !first.name().equals(nodeName)) {
                // The owner token has a node ahead already (made by another of its processes):
                // that one is the owner's, as if the listing had come first; this one goes.
                CompletableFuture<?> gone = place != null ? discard(place) : calls.delete(path, -1);
                return gone.thenCompose(deleted -> attempt(request, round + 1));
              }
              return position(dir, nodes, mine, exclusive)
                  .thenCompose(
                      position -> {
                        noteBusy(dir, !position.holding() || nodes.size() > 1);
                        if (position.holding()) {
                          if (data.waiting() || data.offset() != fence.offset()) {
                            // Waiting, or created with another offset than the lock's fence
                            // record's (below it, or above it with a hint from another life of
                            // the data): claimed with the record's offset, before it is a grant.
                            return claim(
                                request,
                                path,
                                data,
                                node.czxid(),
                                node.version(),
                                node.session(),
                                seen,
                                place,
                                round);
                          }
                          if (place != null) {
                            leave(key, place);
                          }
                          Held grant = held(path, node, data);
                          grants.put(key, grant);
                          return granted(grant, 1);
                        }
                        if (request.queueKeepAliveMillis() == 0
                            || (place != null && queued.get(key) != place)) {
                          // A try does not queue; a place given up while its create was on the
                          // wire (the engine stopped waiting) goes now, not with the session.
                          return calls
                              .delete(path, -1)
                              .thenApply(gone -> AcquireResult.busy(refusalHint()));
                        }
                        if (data.waiting()) {
                          if (place != null) {
                            place.know(held(path, node, data));
                          }
                          return waitBehind(position, place, request, seen);
                        }
                        LockNodeData marked = data.withWaiting(true);
                        return markWaiting(path, marked, node.version(), position)
                            .thenCompose(
                                code -> {
                                  if (code != KeeperException.Code.OK) {
                                    // At the front meanwhile (a grant, as anyone else sees it),
                                    // or changed: the next round lists the directory again.
                                    return attempt(request, round + 1);
                                  }
                                  if (place != null) {
                                    place.know(
                                        new Held(
                                            path,
                                            marked.token(node.czxid()),
                                            node.version() + 1,
                                            marked,
                                            node.session()));
                                  }
                                  return waitBehind(position, place, request, seen);
                                });
                      });
            });
  }

  /**
   * A refusal of an owner whose node waits: a watch on the node it waits for. Its own queue place,
   * if this client made it, is kept alive by this attempt and counts as woken when the watch fires.
   */
  // The hand-off timer hangs off the watch; the watch itself is what the answer carries.
  @SuppressWarnings("FutureReturnValueIgnored")
  private CompletableFuture<AcquireResult> waitBehind(
      Position position, @Nullable QueuePlace place, LockRequest request, Seen seen) {
    if (place != null) {
      place.attempted(request);
      String watched = position.watched();
      place.waitsBehind(position.children() || watched == null ? null : new Behind(watched, seen));
      schedule(place);
    }
    String watched = position.watched();
    if (watched == null) {
      return CompletableFuture.completedFuture(AcquireResult.busy(refusalHint()));
    }
    // An exclusive waiter's turn comes when every node ahead is gone, whatever their data says: a
    // change of the watched node's data (its claim, a re-entry) is no reason to try again.
    CompletableFuture<ZooKeeperCalls.Watch> set =
        position.children() || request.mode() != LockMode.EXCLUSIVE
            ? calls.watch(watched, position.children())
            : calls.watchUntilGone(watched);
    return set.thenApply(
        watch -> {
          if (place != null) {
            // Woken by a change of the node, not by the connection's: a disconnection makes
            // the owner try again at once, which is no turn of its to miss.
            watch.changed().thenRun(() -> woken(place));
          }
          return AcquireResult.busyUntil(watch.fired());
        });
  }

  /**
   * Marks a node that was created as a grant waiting, because a listing found it behind another
   * node: only while that node is still there and (a reader's writer) unchanged, so that the node
   * is still behind it. A node that reached the front meanwhile, not waiting, is a grant as
   * everyone else sees it (an inspection, a fence raise, which counts it as a holder and may leave
   * its token below the raised value); marked waiting, it would be a waiter again, and a later
   * raise that finds the record at its value would take it for a node still to be granted above it.
   *
   * @param position where the listing placed the node
   * @return OK, or BADVERSION or NONODE if the node or the one it waits for changed
   */
  private CompletableFuture<KeeperException.Code> markWaiting(
      String path, LockNodeData marked, int version, Position position) {
    String watched = Objects.requireNonNull(position.watched(), "what a waiting node waits for");
    return writeWhile(watched, position.watchedVersion(), path, marked, version);
  }

  /**
   * Writes a node's data at its version if another node is still at a version, in one multi-op.
   *
   * @param guardVersion the other node's data version, or -1 for any (it must exist)
   * @return OK, or BADVERSION or NONODE if either changed
   */
  private CompletableFuture<KeeperException.Code> writeWhile(
      String guard, int guardVersion, String path, LockNodeData data, int version) {
    return calls
        .transaction(
            op ->
                List.of(
                    op.check().withVersion(guardVersion).forPath(guard),
                    op.setData().withVersion(version).forPath(path, data.encode())))
        .thenApply(ZooKeeperCalls.Transaction::code);
  }

  /**
   * Where a node stands in the queue.
   *
   * @param mine the owner's node, or null for a node that would be created now (at the end)
   * @param exclusive whether that node holds or asks for the exclusive side
   */
  private CompletableFuture<Position> position(
      String dir, List<LockNode> nodes, @Nullable LockNode mine, boolean exclusive) {
    int index = mine == null ? nodes.size() : nodes.indexOf(mine);
    CompletableFuture<Position> inQueue =
        exclusive
            ? CompletableFuture.completedFuture(
                index == 0
                    ? Position.HOLDING
                    : Position.behind(dir, nodes.get(index - 1).name(), -1))
            : nearestWriter(dir, nodes, index - 1);
    String leases = layout.leases(dir);
    if (leases == null) {
      return inQueue;
    }
    // Curator's semaphore mutex: the front of its "locks" queue is only the right to take a lease;
    // the lock is held while a lease exists, so latchkey holds when no lease is left.
    return inQueue.thenCompose(
        position ->
            !position.holding()
                ? CompletableFuture.completedFuture(position)
                : calls
                    .children(leases)
                    .thenApply(
                        held -> held.isEmpty() ? position : new Position(false, leases, true, -1)));
  }

  /** A reader waits for the nearest node ahead that holds or asks for the exclusive side. */
  private CompletableFuture<Position> nearestWriter(String dir, List<LockNode> nodes, int index) {
    for (int i = index; i >= 0; i--) {
      LockNode ahead = nodes.get(i);
      if (!ahead.createdExclusive()) {
        continue;
      }
      if (!ahead.isLatchkeys()) {
        return CompletableFuture.completedFuture(Position.behind(dir, ahead.name(), -1));
      }
      int next = i - 1;
      return calls
          .read(dir + "/" + ahead.name())
          .thenCompose(
              read -> {
                if (read != null && LockNodeData.decode(read.data()).blocksReaders()) {
                  return CompletableFuture.completedFuture(
                      Position.behind(dir, ahead.name(), read.stat().getVersion()));
                }
                // Gone, or a writer that kept only its read side.
                return nearestWriter(dir, nodes, next);
              });
    }
    return CompletableFuture.completedFuture(Position.HOLDING);
  }

  @Override
  public CompletableFuture<ReleaseResult> release(GrantRef grant, LockMode mode) {
    return withNodeToken(grant, ours -> releaseNode(ours, mode), ReleaseResult.NOT_HELD);
  }

  /**
   * @param grant the grant, with its node's token
   */
  private CompletableFuture<ReleaseResult> releaseNode(GrantRef grant, LockMode mode) {
    boolean exclusive = mode == LockMode.EXCLUSIVE;
    Held held = heldGrant(grant);
    if (held != null && held.data().holds(exclusive) > 0) {
      // The node as this client last wrote it: one versioned write or delete, no read.
      LockNodeData less = held.data().plus(exclusive, -1);
      return change(
          grant, exclusive, held.path(), held.token(), held.version(), less, held.session(), 0);
    }
    CompletableFuture<@Nullable String> path =
        held != null ? CompletableFuture.completedFuture(held.path()) : grantPath(grant);
    return path.thenCompose(
        found ->
            found == null
                ? CompletableFuture.completedFuture(ReleaseResult.NOT_HELD)
                : releaseAt(grant, exclusive, found, 0));
  }

  /**
   * The grant as this client holds it, if it made or took it and its owner is one that no other
   * process can have (see the class comment).
   */
  private @Nullable Held heldGrant(GrantRef grant) {
    Held held = grants.get(key(grant.name(), grant.holderId()));
    return held != null && held.token() == grant.fencingToken() && ownedHereAlone(grant.holderId())
        ? held
        : null;
  }

  /** Whether an owner is one of this client's threads, which no other process can act for. */
  private boolean ownedHereAlone(String owner) {
    return owner.startsWith(self.clientId() + ":");
  }

  /**
   * Takes one hold off a grant's node by a write (or a delete with the last hold) at a version.
   * BADVERSION (the node changed, or another node took its path) reads the node and starts over;
   * NONODE means the grant is gone.
   */
  private CompletableFuture<ReleaseResult> change(
      GrantRef grant,
      boolean exclusive,
      String path,
      long token,
      int version,
      LockNodeData less,
      long session,
      int round) {
    boolean last = less.exclusive() == 0 && less.shared() == 0;
    // A last release that fails on the connection would leave the node, and the lock held, for
    // the life of the session: it is sent again when the connection is back. At the same version,
    // so that a node its owner came back to (a re-entry) stays.
    CompletableFuture<KeeperException.Code> change =
        last
            ? strandOnLoss(calls.delete(path, version), grant, path, version)
            : calls
                .write(path, less.encode(), version)
                .whenComplete(
                    (code, failure) -> {
                      if (failure != null && ConnectionGate.isConnectionLoss(failure)) {
                        unsure(grant, new Held(path, token, version, less, session));
                      }
                    });
    return change.thenCompose(
        code -> {
          if (code == KeeperException.Code.BADVERSION) {
            return releaseAt(grant, exclusive, path, round + 1);
          }
          if (code == KeeperException.Code.NONODE || last) {
            forget(grant, path);
          } else {
            grants.computeIfPresent(
                key(grant.name(), grant.holderId()),
                (key, held) ->
                    held.token() == token && held.path().equals(path)
                        ? new Held(path, token, version + 1, less, held.session())
                        : held);
          }
          return CompletableFuture.completedFuture(
              code == KeeperException.Code.NONODE
                  ? ReleaseResult.NOT_HELD
                  : ReleaseResult.released(less.holds(exclusive)));
        });
  }

  /**
   * A call that deletes a grant's node with its last hold: if it fails on the connection, the node
   * is deleted once the connection is back, at the version the call meant to delete (see {@link
   * StrandedNodes}).
   */
  private <T> CompletableFuture<T> strandOnLoss(
      CompletableFuture<T> call, GrantRef grant, String path, int version) {
    return stranded.onConnectionLoss(
        call,
        path,
        version,
        code -> {
          if (code != KeeperException.Code.BADVERSION) {
            forget(grant, path);
          }
        });
  }

  /**
   * A release of one of several holds failed on the connection: the engine counts that hold off,
   * and the write may or may not have been applied. The grant is kept here as the release meant to
   * leave it, at the version it was written at: this client's next change of the node (a release,
   * or a re-entry) is a write at that version, which the server accepts only if the lost write was
   * not applied, and which it then applies on top of the hold count the release meant to leave;
   * else it answers BADVERSION, the node is read, and it holds what the release left. Either way
   * the hold is taken off exactly once. Only for this client's thread owners (see the class
   * comment); a token owner's next change reads the node.
   */
  private void unsure(GrantRef grant, Held meant) {
    if (!ownedHereAlone(grant.holderId())) {
      return;
    }
    grants.compute(
        key(grant.name(), grant.holderId()),
        (key, held) ->
            held == null || (held.token() == meant.token() && held.path().equals(meant.path()))
                ? meant
                : held);
  }

  private CompletableFuture<ReleaseResult> releaseAt(
      GrantRef grant, boolean exclusive, String path, int round) {
    if (round >= ATTEMPTS) {
      return CompletableFuture.failedFuture(
          new ConcurrentModificationException("lock node " + path + " kept changing"));
    }
    return calls
        .read(path)
        .thenCompose(
            read -> {
              if (read == null) {
                forget(grant, path);
                return CompletableFuture.completedFuture(ReleaseResult.NOT_HELD);
              }
              LockNodeData data = LockNodeData.decode(read.data());
              if (!grant.matches(data.token(read.stat().getCzxid()))
                  || data.waiting()
                  || data.holds(exclusive) == 0) {
                return CompletableFuture.completedFuture(ReleaseResult.NOT_HELD);
              }
              return change(
                  grant,
                  exclusive,
                  path,
                  data.token(read.stat().getCzxid()),
                  read.stat().getVersion(),
                  data.plus(exclusive, -1),
                  read.stat().getEphemeralOwner(),
                  round);
            });
  }

  /**
   * Default layout only. In Curator's layouts the front of the queue may also wait for Curator's
   * leases (the semaphore mutex), which a multi-op cannot check, and the directory is shared with
   * Curator's recipes, whose clients these layouts serve while a fleet moves; they release as
   * {@link #release} does.
   */
  @Override
  public boolean handsOver() {
    return layout == LockLayout.LATCHKEY;
  }

  /**
   * The release of a grant's last hold and, in the same multi-op (one write), {@code next}'s node
   * made a grant: the holder's node is deleted at the version this client kept, and next's node is
   * claimed or created.
   *
   * <ul>
   *   <li>A queue place of this client is claimed (its waiting mark cleared, at its version) only
   *       if it waits for the releasing node, which holds the exclusive side and is therefore
   *       first: deleting it puts the place at the front. The multi-op also checks that the
   *       directory's version is still the one the place's listing saw (a raise of the fence record
   *       changes it), so that the offset of the fence record in that listing is the lock's: the
   *       place is the grant with no further call.
   *   <li>For an owner with no node, the node is created holding, at the end of the queue. One
   *       listing after the multi-op tells where it stands and shows the fence record: at the
   *       front, the node is next's grant (its offset set to the record's first, if this client's
   *       hint was another); behind another node (a waiter of another client that came first), it
   *       is marked waiting and watches the node ahead, as after the owner's own attempt, and the
   *       answer to next is that attempt's refusal. If the node ahead went before the mark ({@link
   *       #markWaiting}), the node is not marked and next gets no answer: its owner's next attempt
   *       takes the grant. The node ahead was woken by the delete, as by a plain release.
   * </ul>
   *
   * <p>Anything else (a holder with more holds, an owner token, a place that waits for another node
   * or whose last write is not known) is a plain {@link #release}, and next is not attempted. A
   * multi-op refused (the holder's node, next's place or the directory changed meanwhile) applied
   * nothing: a plain release follows. One whose answer was lost may have been applied: the holder's
   * delete is sent again when the connection is back ({@link StrandedNodes}), and next's node stays
   * a queue place in {@link #queued} (a created one with its creation id, found by the owner's next
   * attempt as a create whose answer was lost is), which the owner's next attempt takes if it is at
   * the front, or which its keep-alive deletes if the owner does not come.
   */
  @Override
  public CompletableFuture<HandOverResult> releaseAndHandOver(
      GrantRef grant, LockMode mode, LockRequest next) {
    return withNodeToken(
        grant,
        ours -> releaseNodeAndHandOver(ours, mode, next),
        new HandOverResult(ReleaseResult.NOT_HELD, null));
  }

  /**
   * @param grant the grant, with its node's token
   */
  private CompletableFuture<HandOverResult> releaseNodeAndHandOver(
      GrantRef grant, LockMode mode, LockRequest next) {
    boolean exclusive = mode == LockMode.EXCLUSIVE;
    Held held = heldGrant(grant);
    String key = key(next.name(), next.owner());
    if (!handsOver()
        || held == null
        || held.data().holds(exclusive) != 1
        || held.data().holds(!exclusive) != 0
        || !next.name().equals(grant.name())
        || !ownedHereAlone(next.owner())
        || next.queueKeepAliveMillis() <= 0
        || grants.containsKey(key)) {
      return releaseAlone(grant, mode);
    }
    QueuePlace place = queued.get(key);
    if (place == null) {
      return handOverToNewNode(grant, mode, held, next);
    }
    Held known = place.known();
    Behind behind = place.behind();
    if (known == null
        || behind == null
        || behind.seen().version() < 0
        || held.data().exclusive() == 0
        || !held.path().equals(behind.node())
        || !known.path().equals(place.path())
        || place.exclusive != (next.mode() == LockMode.EXCLUSIVE)
        || !place.begin(Step.CLAIMING)) {
      return releaseAlone(grant, mode);
    }
    // The fence record the place's listing saw is still the lock's if the directory's version
    // is: the place is claimed with it, and is the grant without a listing.
    LockNodeData claimed = known.data().under(behind.seen().fence()).withWaiting(false);
    return handOver(
        grant,
        mode,
        held,
        op ->
            List.of(
                op.check().withVersion(behind.seen().version()).forPath(place.dir),
                op.delete().withVersion(held.version()).forPath(held.path()),
                op.setData().withVersion(known.version()).forPath(known.path(), claimed.encode())),
        place,
        results ->
            settleHandedOver(
                next,
                place,
                held(known.path(), results.get(2).getResultStat(), claimed),
                Position.HOLDING,
                behind.seen()));
  }

  private CompletableFuture<HandOverResult> releaseAlone(GrantRef grant, LockMode mode) {
    return releaseNode(grant, mode).thenApply(released -> new HandOverResult(released, null));
  }

  /**
   * A hand-over to an owner of whom this client keeps no node: its node is created in the release's
   * multi-op, entered in {@link #queued} first as a waiting owner's is. A create's answer carries
   * no stat, so the multi-op first writes the releasing node (with its hold taken off) before it
   * deletes it: that write's stat shows the multi-op's zxid, which is the new node's creation zxid.
   * Only a node that watches the releasing node hears of the write (as a change, before the
   * delete), and such a waiter is ahead of the new node anyway.
   */
  private CompletableFuture<HandOverResult> handOverToNewNode(
      GrantRef grant, LockMode mode, Held held, LockRequest next) {
    String dir = layout.dir(next.name());
    String digest = ZooKeeperPaths.ownerDigest(next.owner());
    String creation = creationId();
    LockNodeData data = newNodeData(next, dir, false, creation);
    LockNodeData less = held.data().plus(mode == LockMode.EXCLUSIVE, -1);
    QueuePlace place = placeOf(next, dir, digest, creation);
    enqueue(place, next);
    place.begin(Step.CLAIMING);
    return handOver(
        grant,
        mode,
        held,
        op ->
            List.of(
                op.setData().withVersion(held.version()).forPath(held.path(), less.encode()),
                op.delete().withVersion(held.version() + 1).forPath(held.path()),
                op.create()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .forPath(
                        dir + "/" + layout.nodePrefix(digest, place.exclusive), data.encode())),
        place,
        results -> {
          String path = Objects.requireNonNull(results.get(2).getResultPath(), "created path");
          place.located(path);
          long zxid = results.get(0).getResultStat().getMzxid();
          return placeHandedOver(
              next, place, new Held(path, data.token(zxid), 0, data, place.session));
        });
  }

  /**
   * Sends a hand-over's multi-op, which deletes the releasing node and makes {@code place}'s node a
   * grant.
   *
   * @param place next's queue place, being claimed
   * @param attempt next's answer, from the results of the applied multi-op
   */
  private CompletableFuture<HandOverResult> handOver(
      GrantRef grant,
      LockMode mode,
      Held held,
      ZooKeeperCalls.Operations ops,
      QueuePlace place,
      Function<List<CuratorTransactionResult>, CompletableFuture<@Nullable AcquireResult>>
          attempt) {
    return strandOnLoss(calls.transaction(ops), grant, held.path(), held.version())
        .whenComplete(
            (answer, failure) -> {
              if (failure != null) {
                notHandedOver(place, ConnectionGate.isConnectionLoss(failure));
              }
            })
        .thenCompose(
            answer -> {
              if (!answer.ok()) {
                // Nothing was applied: the holder's node, next's place or the directory (a fence
                // raise) changed meanwhile.
                notHandedOver(place, false);
                return releaseAlone(grant, mode);
              }
              forget(grant, held.path());
              return attempt
                  .apply(answer.results())
                  .thenApply(granted -> new HandOverResult(ReleaseResult.released(0), granted));
            });
  }

  /**
   * A hand-over did not make next's node a grant: a place that may exist stays for the owner's next
   * attempt (read afresh), one that was never created goes.
   *
   * @param maybeApplied whether the multi-op may have been applied (its answer was lost)
   */
  private void notHandedOver(QueuePlace place, boolean maybeApplied) {
    if (place.path() == null && !maybeApplied) {
      leave(place.key, place);
      return;
    }
    place.know(null);
    place.endClaim();
    schedule(place);
  }

  /**
   * Where the node a hand-over made a grant stands: at the front, it is next's grant (its offset
   * set to the lock's fence record's first, if it differs); behind another node, it is marked
   * waiting (while that node is still ahead, {@link #markWaiting}) and waits as a queue place.
   *
   * @return the answer to next's attempt, or null if none can be given (the node is gone, the node
   *     ahead went before the mark, or a call failed: the owner's next attempt finds out)
   */
  private CompletableFuture<@Nullable AcquireResult> placeHandedOver(
      LockRequest next, QueuePlace place, Held node) {
    String dir = place.dir;
    return listWith(dir, node.path())
        .thenCompose(
            listed -> {
              LockNode mine = listed.mine();
              if (mine == null) {
                // Deleted at once (force release, or the session ended): the owner starts over.
                leave(place.key, place);
                return CompletableFuture.<@Nullable AcquireResult>completedFuture(null);
              }
              return position(dir, listed.nodes(), mine, place.exclusive)
                  .thenCompose(
                      position -> {
                        noteBusy(dir, !position.holding() || listed.nodes().size() > 1);
                        LockNodeData data =
                            position.holding()
                                ? node.data().under(listed.seen().fence())
                                : node.data().withWaiting(true);
                        if (data.equals(node.data())) {
                          return settleHandedOver(next, place, node, position, listed.seen());
                        }
                        CompletableFuture<KeeperException.Code> written =
                            position.holding()
                                ? calls.write(node.path(), data.encode(), node.version())
                                : markWaiting(node.path(), data, node.version(), position);
                        return written.thenCompose(
                            code -> {
                              if (code != KeeperException.Code.OK) {
                                notHandedOver(place, true);
                                return CompletableFuture.<@Nullable AcquireResult>completedFuture(
                                    null);
                              }
                              return settleHandedOver(
                                  next,
                                  place,
                                  new Held(
                                      node.path(),
                                      data.token(node.czxid()),
                                      node.version() + 1,
                                      data,
                                      node.session()),
                                  position,
                                  listed.seen());
                            });
                      });
            })
        .exceptionally(
            failure -> {
              notHandedOver(place, true);
              return null;
            });
  }

  private CompletableFuture<@Nullable AcquireResult> settleHandedOver(
      LockRequest next, QueuePlace place, Held node, Position position, Seen seen) {
    if (position.holding()) {
      leave(place.key, place);
      grants.put(place.key, node);
      return granted(node, 1).thenApply(answer -> answer);
    }
    place.know(node);
    place.endClaim();
    return waitBehind(position, place, next, seen).thenApply(answer -> answer);
  }

  @Override
  public CompletableFuture<Void> leaveQueue(String name, String owner) {
    QueuePlace place = queued.get(key(name, owner));
    if (place == null) {
      return CompletableFuture.completedFuture(null);
    }
    return discard(place);
  }

  /**
   * Deletes a place whose owner gave up or whose keep-alive ran out. A place being claimed is left
   * to the claim: if the claim fails, the place's timer comes back to it.
   *
   * @return completes when the delete was answered, or handed to a retry after reconnection
   */
  private CompletableFuture<Void> discard(QueuePlace place) {
    if (!place.begin(Step.LEAVING)) {
      return CompletableFuture.completedFuture(null);
    }
    place.cancelTimer();
    return deleteLeaving(place);
  }

  private CompletableFuture<Void> deleteLeaving(QueuePlace place) {
    return locate(place)
        .thenCompose(
            path ->
                path == null
                    ? CompletableFuture.completedFuture(KeeperException.Code.NONODE)
                    : calls.delete(path, -1))
        .handle(
            (code, failure) -> {
              if (failure != null
                  && ConnectionGate.isConnectionLoss(failure)
                  && queued.get(place.key) == place) {
                deleteWhenBack(place);
              } else {
                // Deleted, gone already, or refused for good (the session ends with it).
                queued.remove(place.key, place);
              }
              return null;
            });
  }

  /** Sends a place's delete again once the connection is back, while the session lives. */
  // The retry routes its own outcome; a session that ends drops the place from queued.
  @SuppressWarnings("FutureReturnValueIgnored")
  private void deleteWhenBack(QueuePlace place) {
    gate.whenBack(
        () -> {
          if (queued.get(place.key) == place) {
            deleteLeaving(place);
          }
        });
  }

  /**
   * Whether a lock grant is still on record: its owner's node exists with the grant's token.
   *
   * @param grant the grant
   * @return true if held, false if gone
   */
  CompletableFuture<Boolean> confirm(GrantRef grant) {
    return withNodeToken(grant, ours -> grantPath(ours).thenApply(found -> found != null), false);
  }

  /** The client closes: its session ends, and every node this client made goes with it. */
  void forgetAll() {
    queued.values().forEach(QueuePlace::cancelTimer);
    queued.clear();
    grants.clear();
  }

  /**
   * A session ended: the places and grants made in any session but the current one are gone with
   * their nodes. Those of the current session stay: a waiter or an acquire may have used the new
   * session before the backend heard that the old one ended, and a late or repeated report of the
   * old session's end must not drop them (their nodes live on, and a place nobody keeps would hold
   * the lock's queue for the life of the session).
   *
   * @param current the session of the client's handle now, or 0 if it has none yet
   */
  void forgetAllBut(long current) {
    queued
        .values()
        .removeIf(
            place -> {
              if (place.session == current) {
                return false;
              }
              place.cancelTimer();
              return true;
            });
    grants.values().removeIf(held -> held.session() != current);
    // The fence records seen may be of another life of the data (a server restarted empty).
    fences.clear();
  }

  /**
   * The node of a grant: the one this client made for it, else the owner's node (another process of
   * an owner token made it) whose token is the grant's, or the owner's holding node for {@link
   * GrantRef#ANY_TOKEN}. An owner may have more than one node for a moment (two attempts of one
   * owner token in two processes), so the token decides, not the owner alone.
   *
   * @return the node's path, or null if the grant is not on record
   */
  private CompletableFuture<@Nullable String> grantPath(GrantRef grant) {
    Held held = heldGrant(grant);
    if (held != null) {
      String known = held.path();
      return calls
          .stat(known)
          .thenCompose(
              stat -> {
                if (stat != null && stat.getCzxid() == held.czxid()) {
                  return CompletableFuture.completedFuture(known);
                }
                forget(grant, known);
                return CompletableFuture.completedFuture(null);
              });
    }
    String dir = layout.dir(grant.name());
    String digest = ZooKeeperPaths.ownerDigest(grant.holderId());
    return calls
        .children(dir)
        .thenCompose(
            children ->
                ownersNodeWhere(
                    dir,
                    digest,
                    children,
                    (stat, data) -> grant.matches(data.token(stat.getCzxid())) && !data.waiting()));
  }

  private void forget(GrantRef grant, String path) {
    grants.computeIfPresent(
        key(grant.name(), grant.holderId()),
        (key, held) ->
            held.token() == grant.fencingToken() && held.path().equals(path) ? null : held);
  }

  /**
   * Enters a place whose node is about to be created. Its timer starts only once the owner waits
   * (or its create fails): an acquire granted at once costs no timer, and an owner that gives up
   * deletes its place itself (leaveQueue).
   */
  private void enqueue(QueuePlace place, LockRequest request) {
    QueuePlace stale = queued.put(place.key, place);
    if (stale != null) {
      // Its node was not in the listing this place was made after: it is gone.
      stale.cancelTimer();
    }
    place.attempted(request);
  }

  private static @Nullable LockNode named(List<LockNode> nodes, String path) {
    String name = path.substring(path.lastIndexOf('/') + 1);
    for (LockNode node : nodes) {
      if (node.name().equals(name)) {
        return node;
      }
    }
    return null;
  }

  private static String creationId() {
    return Long.toHexString(ThreadLocalRandom.current().nextLong())
        + Long.toHexString(ThreadLocalRandom.current().nextLong());
  }

  private static @Nullable LockNode ownersNode(List<LockNode> nodes, String digest) {
    for (LockNode node : nodes) {
      if (digest.equals(node.ownerDigest())) {
        return node;
      }
    }
    return null;
  }

  private long refusalHint() {
    return Math.max(1, sessionTimeoutMillis.getAsLong());
  }

  /**
   * A grant, valid for the session timeout: the node may be gone that long after a blip. Its token
   * is the node's plus the base of the data ({@link TokenBase}), known without a request unless the
   * session changed since the base was read ({@link #attemptFirst}): a failure here, after the
   * grant is written and kept, would have a waiting attempt made again, which adds a hold.
   *
   * @param grant the grant as kept, with its node's token and the session that wrote it
   */
  private CompletableFuture<AcquireResult> granted(Held grant, int holds) {
    return tokenBase
        .ofGrant(grant.session())
        .thenApply(
            base ->
                AcquireResult.grantedFor(
                    base + grant.token(), holds, sessionTimeoutMillis.getAsLong()));
  }

  /**
   * A grant as this store keeps it: with its node's token, the base taken off ({@link TokenBase}).
   *
   * @param act what to do with it
   * @param notOfThisData the answer for a grant made on another life of the data: its token is not
   *     above the base of the data the session lives on now, so no node here is the grant's
   */
  private <T> CompletableFuture<T> withNodeToken(
      GrantRef grant, Function<GrantRef, CompletableFuture<T>> act, T notOfThisData) {
    if (grant.fencingToken() == GrantRef.ANY_TOKEN) {
      return act.apply(grant);
    }
    return tokenBase
        .current()
        .thenCompose(
            base ->
                grant.fencingToken() > base
                    ? act.apply(new GrantRef(grant.holder(), grant.fencingToken() - base))
                    : CompletableFuture.completedFuture(notOfThisData));
  }

  private static String key(String name, String owner) {
    return name + '\u0000' + owner;
  }

  private void leave(String key, QueuePlace place) {
    if (queued.remove(key, place)) {
      place.cancelTimer();
    }
  }

  private void woken(QueuePlace place) {
    place.woken(System.nanoTime());
    schedule(place);
  }

  /** Checks a queue place again when its keep-alive or hand-off may have run out. */
  private void schedule(QueuePlace place) {
    long delay = place.dueNanos() - System.nanoTime();
    try {
      place.replaceTimer(
          scheduler.schedule(() -> expire(place), Math.max(delay, 0), TimeUnit.NANOSECONDS));
    } catch (RejectedExecutionException closed) {
      // The client is closing; its session ends and takes the place with it.
    }
  }

  // discard routes the delete's outcome itself.
  @SuppressWarnings("FutureReturnValueIgnored")
  private void expire(QueuePlace place) {
    if (queued.get(place.key) != place) {
      return;
    }
    if (place.dueNanos() > System.nanoTime()) {
      schedule(place);
      return;
    }
    discard(place);
  }

  /** What is being done with a queue place. */
  private enum Step {
    WAITING,
    CLAIMING,
    LEAVING
  }

  /**
   * A node this client made (or is making) for an owner who waits: its keep-alive and hand-off, and
   * whether it is being claimed or deleted.
   */
  private static final class QueuePlace {
    final String key;
    final String dir;
    final String digest;
    final String creation;
    final boolean exclusive;

    /** The session of the client's handle when the place's create was sent. */
    final long session;

    private @Nullable String path;
    private Step step = Step.WAITING;
    private long lastAttemptNanos;
    private long keepAliveNanos;
    private long handoffNanos;
    private long wokenAtNanos;
    private boolean woken;
    private @Nullable ScheduledFuture<?> timer;
    private @Nullable Held known;
    private @Nullable Behind behind;

    QueuePlace(
        String key, String dir, String digest, String creation, boolean exclusive, long session) {
      this.key = key;
      this.session = session;
      this.dir = dir;
      this.digest = digest;
      this.creation = creation;
      this.exclusive = exclusive;
    }

    /** The node's path, or null while its create has not been answered. */
    synchronized @Nullable String path() {
      return path;
    }

    synchronized void located(String created) {
      path = created;
    }

    /** The place's node as this client last wrote it, or null if it must be read. */
    synchronized @Nullable Held known() {
      return known;
    }

    synchronized void know(@Nullable Held node) {
      known = node;
    }

    /** What this place waits for, as its last attempt saw it, or null if unknown. */
    synchronized @Nullable Behind behind() {
      return behind;
    }

    synchronized void waitsBehind(@Nullable Behind ahead) {
      behind = ahead;
    }

    /**
     * Starts claiming or deleting the place: the two exclude each other.
     *
     * @return false if the place is in the other step
     */
    synchronized boolean begin(Step next) {
      if (step != Step.WAITING && step != next) {
        return false;
      }
      step = next;
      return true;
    }

    synchronized void endClaim() {
      if (step == Step.CLAIMING) {
        step = Step.WAITING;
      }
    }

    synchronized boolean isLeaving() {
      return step == Step.LEAVING;
    }

    synchronized void attempted(LockRequest request) {
      lastAttemptNanos = System.nanoTime();
      keepAliveNanos = TimeUnit.MILLISECONDS.toNanos(request.queueKeepAliveMillis());
      handoffNanos = TimeUnit.MILLISECONDS.toNanos(request.handoffMillis());
      woken = false;
    }

    synchronized void woken(long now) {
      if (!woken) {
        woken = true;
        wokenAtNanos = now;
      }
    }

    /**
     * When the place runs out unless the owner comes: its keep-alive, or its hand-off once woken.
     */
    synchronized long dueNanos() {
      long due = lastAttemptNanos + keepAliveNanos;
      if (woken) {
        due = Math.min(due, wokenAtNanos + handoffNanos);
      }
      return due;
    }

    synchronized void replaceTimer(ScheduledFuture<?> next) {
      if (timer != null) {
        timer.cancel(false);
      }
      timer = next;
    }

    synchronized void cancelTimer() {
      if (timer != null) {
        timer.cancel(false);
        timer = null;
      }
    }
  }
}
