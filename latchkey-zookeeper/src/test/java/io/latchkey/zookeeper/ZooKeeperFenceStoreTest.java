package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.HolderInfo;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.FenceStore;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HandOverResult;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.ResourceType;
import io.latchkey.testkit.EpochRecordChecks;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.drivers.TracerDriver;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.proto.SetDataRequest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The fence store of a ZooKeeper quorum member ({@link ZooKeeperFenceStore}) on a real server: a
 * raised lock makes the next grant's token larger (a node that was waiting already included), is
 * never lowered and costs an uncontended cycle no request once the client knows it; the epoch
 * record is absent in new data, created with a quarantine that the server's clock ends, raised but
 * never lowered.
 */
class ZooKeeperFenceStoreTest {
  private static final String NAMESPACE = "fences";
  private static final Duration WAIT = Duration.ofSeconds(10);

  /** Far above any zxid of a test server, and below 2^53 as a quorum member's token must be. */
  private static final long AHEAD = 1L << 50;

  private TestingServer server;
  private final List<AutoCloseable> opened = new ArrayList<>();

  @BeforeEach
  void start() {
    server = ZooKeeperTestServers.start();
  }

  @AfterEach
  void stop() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
    server.close();
  }

  @Test
  void theEpochRecordIsCreatedWithAQuarantineAndRaisedNeverLowered() throws Exception {
    EpochRecordChecks.createdRaisedNeverLowered(fences());
  }

  @Test
  void aQuarantineEndsByTheServersClock() throws Exception {
    EpochRecordChecks.aShortQuarantineEnds(fences());
  }

  @Test
  void aRaisedLockGrantsAboveTheRaiseAndIsNeverLowered() throws Exception {
    FenceStore fences = fences();
    Latchkey client = connect();

    // Never held, never raised: a read creates nothing.
    assertThat(raise(fences, "never", 0)).isZero();
    // The counter, read, is the holder's token.
    Lease held = client.lock("fenced").acquire(WAIT);
    assertThat(raise(fences, "fenced", 0)).isEqualTo(held.fencingToken());
    long first = held.fencingToken();
    held.release();

    long raisedTo = first + AHEAD;
    assertThat(raise(fences, "fenced", raisedTo)).isEqualTo(raisedTo);
    assertThat(raise(fences, "fenced", first + 1)).as("never lowered").isEqualTo(raisedTo);
    long next = acquireAndRelease(client, "fenced");
    // Above the raise, by the few zxids between the raise and the grant.
    assertThat(next).isBetween(raisedTo + 1, raisedTo + 1_000);
    assertThat(acquireAndRelease(client, "fenced")).isGreaterThan(next);
    // A client that never saw the lock's record before gets tokens above it too.
    assertThat(acquireAndRelease(connect(), "fenced")).isGreaterThan(next);

    // A name that never had a holder gets its record, and its first holder a token above it.
    assertThat(raise(fences, "fresh", AHEAD)).isEqualTo(AHEAD);
    assertThat(acquireAndRelease(client, "fresh")).isGreaterThan(AHEAD);
  }

  @Test
  void aNodeWaitingBeforeTheRaiseIsGrantedAboveIt() throws Exception {
    FenceStore fences = fences();
    Latchkey holder = connect();
    Latchkey waiter = connect();
    Lease held = holder.lock("queued").acquire(WAIT);
    CompletableFuture<Lease> waiting =
        waiter.lock("queued").acquireAsync(WAIT).toCompletableFuture();
    await()
        .atMost(WAIT)
        .until(() -> holder.admin().inspect("queued").map(LockInfo::queuedWaiters).orElse(0) == 1);

    long raisedTo = held.fencingToken() + AHEAD;
    assertThat(raise(fences, "queued", raisedTo)).isEqualTo(raisedTo);
    held.release();
    Lease granted = waiting.get(10, TimeUnit.SECONDS);
    assertThat(granted.fencingToken()).isGreaterThan(raisedTo);
    // Inspection and the counter show the grant's raised token.
    assertThat(waiter.admin().inspect("queued").orElseThrow().holders().get(0).fencingToken())
        .isEqualTo(granted.fencingToken());
    assertThat(raise(fences, "queued", 0)).isEqualTo(granted.fencingToken());
    granted.release();
  }

  /**
   * A raise between the listing that finds a waiting node at the front and the write that claims
   * it: the raise sees the node waiting (no holder), so the grant comes after the raise and its
   * token must be above it. The claim's listing is older than the raise, so the claim must not go
   * through with that listing's fence record. B's claim is held back until the raise is answered.
   */
  @Test
  void aClaimWhoseListingIsOlderThanARaiseIsGrantedAboveIt() throws Exception {
    FenceStore fences = fences();
    LatchkeyBackend observer = backend("holder");
    LockStore holder = observer.locks();
    PausedWrites paused = new PausedWrites();
    LockStore waiter = pausing(paused).locks();
    String name = "claimed";
    AcquireResult a = get(holder.tryAcquire(request(name, "holder:a")));
    LockRequest b = request(name, "waiter:b");
    assertThat(get(waiter.tryAcquire(b)).isGranted()).isFalse();
    get(holder.release(grant(name, "holder:a", a), LockMode.EXCLUSIVE));

    paused.arm(false);
    CompletableFuture<AcquireResult> claiming = waiter.tryAcquire(b).toCompletableFuture();
    paused.awaitPaused();
    assertThat(holders(observer, name)).as("B's node waits at the front: no holder").isEmpty();
    long raised = raiseThenResume(fences, name, a, paused);

    AcquireResult granted = get(claiming);
    assertThat(granted.isGranted()).isTrue();
    assertThat(granted.fencingToken())
        .as("B's grant, after a raise to %d that found B's node waiting", raised)
        .isGreaterThan(raised);
  }

  /**
   * B's node is created as a grant (B's client has not seen the lock busy) behind A's. A releases
   * before B's attempt marks its node waiting: the node is then at the front and not waiting, the
   * lock's holder as a raise sees it, and a raise counts it so (its token may stay below the raise:
   * the grant was there before the raise). Marking it waiting now would turn that holder back into
   * a waiter, and a second raise to the same value, which writes nothing (the record has it
   * already), would find a waiting node whose grant comes after it with a token below it.
   */
  @Test
  void aNodeThatARaiseCountedAsTheHolderIsNotMadeToWaitAgain() throws Exception {
    FenceStore fences = fences();
    LatchkeyBackend observer = backend("holder");
    LockStore holder = observer.locks();
    PausedWrites paused = new PausedWrites();
    LockStore waiter = pausing(paused).locks();
    String name = "marked";
    AcquireResult a = get(holder.tryAcquire(request(name, "holder:a")));
    LockRequest b = request(name, "waiter:b");

    paused.arm(true);
    CompletableFuture<AcquireResult> placing = waiter.tryAcquire(b).toCompletableFuture();
    paused.awaitPaused();
    get(holder.release(grant(name, "holder:a", a), LockMode.EXCLUSIVE));
    assertThat(holders(observer, name))
        .as("B's node at the front, not waiting: the holder, as a raise sees it")
        .singleElement()
        .satisfies(held -> assertThat(held.owner()).isEqualTo("waiter:b"));
    long raised = raiseThenResume(fences, name, a, paused);
    AcquireResult first = get(placing);

    assertSecondRaiseBoundsTheGrant(fences, observer, waiter, b, first, raised);
  }

  /**
   * The hand-over's node behind another client's waiter: R queues (another client) while A holds;
   * A's release hands over to B, whose node the multi-op creates as a grant, behind R. R leaves
   * before B's node is marked waiting: B's node is at the front and not waiting, and a raise counts
   * it as the holder; as above, it must not be made to wait again.
   */
  @Test
  void aHandedOverNodeThatARaiseCountedAsTheHolderIsNotMadeToWaitAgain() throws Exception {
    FenceStore fences = fences();
    LatchkeyBackend observer = backend("other");
    LockStore other = observer.locks();
    PausedWrites paused = new PausedWrites();
    LockStore mine = pausing(paused).locks();
    String name = "handed";
    AcquireResult a = get(mine.tryAcquire(request(name, "waiter:a")));
    LockRequest r = request(name, "other:r");
    assertThat(get(other.tryAcquire(r)).isGranted()).isFalse();
    LockRequest b = request(name, "waiter:b");

    paused.arm(true);
    CompletableFuture<HandOverResult> handing =
        mine.releaseAndHandOver(grant(name, "waiter:a", a), LockMode.EXCLUSIVE, b)
            .toCompletableFuture();
    paused.awaitPaused();
    get(other.leaveQueue(name, r.owner()));
    assertThat(holders(observer, name))
        .as("B's node at the front, not waiting: the holder, as a raise sees it")
        .singleElement()
        .satisfies(held -> assertThat(held.owner()).isEqualTo("waiter:b"));
    long raised = raiseThenResume(fences, name, a, paused);
    HandOverResult handedOver = get(handing);
    assertThat(handedOver.released()).isEqualTo(ReleaseResult.released(0));
    AcquireResult first = handedOver.next();

    assertSecondRaiseBoundsTheGrant(fences, observer, mine, b, first, raised);
  }

  /**
   * A second raise to the same value, then B's grant (the answer B had, or B's next attempt): if
   * the raise found B's node waiting, B's grant is above it. Then the cause: B's node, counted as
   * the holder by the first raise, never waits again.
   *
   * @param first the answer to the attempt that was held back, or null if none was made
   */
  private static void assertSecondRaiseBoundsTheGrant(
      FenceStore fences,
      LatchkeyBackend observer,
      LockStore waiter,
      LockRequest b,
      @Nullable AcquireResult first,
      long raised)
      throws Exception {
    boolean waitsAtRaise = holders(observer, b.name()).isEmpty();
    assertThat(raise(fences, b.name(), raised)).isEqualTo(raised);
    AcquireResult granted = first != null && first.isGranted() ? first : get(waiter.tryAcquire(b));
    assertThat(granted.isGranted()).isTrue();
    if (waitsAtRaise) {
      assertThat(granted.fencingToken())
          .as("B's grant, after a raise to %d that found B's node waiting", raised)
          .isGreaterThan(raised);
    }
    assertThat(waitsAtRaise)
        .as("B's node, which the first raise counted as the holder, waits again")
        .isFalse();
  }

  /**
   * Holds back the first write of a lock node's data with a given waiting mark, alone or in a
   * multi-op, once armed, until the test resumes it: the client has sent it, the server has not
   * seen it.
   */
  private static final class PausedWrites {
    private final AtomicBoolean armed = new AtomicBoolean();
    private volatile boolean waiting;
    private final CompletableFuture<Runnable> held = new CompletableFuture<>();

    void arm(boolean waits) {
      waiting = waits;
      armed.set(true);
    }

    void awaitPaused() throws Exception {
      held.get(10, TimeUnit.SECONDS);
    }

    void resume() throws Exception {
      held.get(10, TimeUnit.SECONDS).run();
    }

    /** Whether to hold back a write of these lock node data. */
    private boolean holdsBack(String path, byte[] data) {
      return armed.get()
          && path.contains("/" + ZooKeeperPaths.LOCK_NODE_PREFIX)
          && LockNodeData.decode(data).waiting() == waiting
          && armed.compareAndSet(true, false);
    }

    // ZooKeeper's close() may throw InterruptedException; Curator closes it, not this class.
    @SuppressWarnings("try")
    ZooKeeper open(String connectString, int sessionTimeout, Watcher watcher) throws IOException {
      return new ZooKeeper(connectString, sessionTimeout, watcher) {
        @Override
        public void setData(
            String path, byte[] data, int version, AsyncCallback.StatCallback cb, Object ctx) {
          if (holdsBack(path, data)) {
            held.complete(() -> super.setData(path, data, version, cb, ctx));
          } else {
            super.setData(path, data, version, cb, ctx);
          }
        }

        @Override
        public void multi(Iterable<Op> ops, AsyncCallback.MultiCallback cb, Object ctx) {
          boolean holdBack = false;
          for (Op op : ops) {
            if (op.getType() == ZooDefs.OpCode.setData
                && holdsBack(op.getPath(), ((SetDataRequest) op.toRequestRecord()).getData())) {
              holdBack = true;
            }
          }
          if (holdBack) {
            held.complete(() -> super.multi(ops, cb, ctx));
          } else {
            super.multi(ops, cb, ctx);
          }
        }
      };
    }
  }

  /** A backend whose Curator client opens its ZooKeeper handles through {@code paused}. */
  private LatchkeyBackend pausing(PausedWrites paused) throws InterruptedException {
    CuratorFramework curator =
        CuratorFrameworkFactory.builder()
            .connectString(server.getConnectString())
            .sessionTimeoutMs(10_000)
            .retryPolicy(new RetryNTimes(0, 0))
            .zookeeperFactory(
                (connectString, sessionTimeout, watcher, canBeReadOnly) ->
                    paused.open(connectString, sessionTimeout, watcher))
            .build();
    curator.start();
    opened.add(curator);
    assertThat(curator.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
    return closeAfter(
        ZooKeeperBackend.builder(curator).namespace(NAMESPACE).build().open(context("waiter")));
  }

  private LatchkeyBackend backend(String clientId) {
    return closeAfter(
        ZooKeeperBackend.open(
            URI.create(ZooKeeperTestServers.uri(server.getConnectString(), NAMESPACE)),
            context(clientId)));
  }

  /** An owner of the client {@code clientId:}, queued for up to 30 s, handed off within 30 s. */
  private static LockRequest request(String name, String owner) {
    return new LockRequest(name, owner, LockMode.EXCLUSIVE, 30_000, true, 30_000, 30_000);
  }

  private static GrantRef grant(String name, String owner, AcquireResult granted) {
    return new GrantRef(new HolderRef(ResourceType.LOCK, name, owner), granted.fencingToken());
  }

  /** The lock's holders, as an inspection (and a raise) sees them. */
  private static List<HolderInfo> holders(LatchkeyBackend observer, String name) throws Exception {
    return get(observer.admin().inspect(name)).map(LockInfo::holders).orElse(List.of());
  }

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /**
   * An uncontended acquire and release costs its three requests (a create, a listing, a delete) in
   * two round trips (the listing goes with the create) whether the lock was raised or not: the
   * record is read in the listing, and a client that knows it creates its nodes with its offset.
   * Counted as the background operations Curator sends.
   */
  @Test
  void anUncontendedCycleCostsThreeRequestsInTwoRoundTripsRaisedOrNot() throws Exception {
    BackgroundCalls calls = new BackgroundCalls();
    CuratorFramework curator =
        CuratorFrameworkFactory.builder()
            .connectString(server.getConnectString())
            .sessionTimeoutMs(3_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .build();
    curator.getZookeeperClient().setTracerDriver(calls);
    curator.start();
    opened.add(curator);
    Latchkey client =
        closeAfter(
            Latchkey.using(
                ZooKeeperBackend.builder(curator).namespace(NAMESPACE).build(),
                LatchkeyOptions.builder().closeOnShutdown(false).build()));
    DistributedLock lock = client.lock("counted");
    acquireAndRelease(client, "counted");

    assertThat(typicalCycle(lock, calls)).as("never raised").isEqualTo(new Cycle(3, 2));
    raise(fences(), "counted", AHEAD);
    // The first cycle learns the record (and writes the offset into its node once).
    acquireAndRelease(client, "counted");
    assertThat(typicalCycle(lock, calls)).as("raised").isEqualTo(new Cycle(3, 2));
  }

  /** The requests and round trips of an acquire and its release. */
  private record Cycle(int requests, int roundTrips) {}

  /**
   * What most of 30 cycles cost: a client's own periodic calls (presence) may fall into a cycle,
   * and the server removes the lock's directory (a container) when it finds it empty between two
   * cycles, which costs the next one its re-creation.
   */
  private static Cycle typicalCycle(DistributedLock lock, BackgroundCalls calls)
      throws InterruptedException {
    Map<Cycle, Integer> seen = new HashMap<>();
    for (int i = 0; i < 30; i++) {
      calls.clear();
      lock.acquire(WAIT).release();
      seen.merge(new Cycle(calls.requests(), calls.roundTrips()), 1, Integer::sum);
    }
    return Collections.max(seen.entrySet(), Map.Entry.comparingByValue()).getKey();
  }

  /**
   * The background operations Curator sent, each as the time from its start (before it is sent) to
   * its answer. Operations whose times overlap were on the wire together and share a round trip;
   * one sent from another's answer starts after that answer and takes a round trip of its own.
   */
  private static final class BackgroundCalls implements TracerDriver {
    private final List<long[]> spans = new ArrayList<>();

    @Override
    public synchronized void addTrace(String name, long time, TimeUnit unit) {
      if (name.endsWith("-Background")) {
        long answered = System.nanoTime();
        spans.add(new long[] {answered - unit.toNanos(time), answered});
      }
    }

    @Override
    public void addCount(String name, int increment) {}

    synchronized void clear() {
      spans.clear();
    }

    synchronized int requests() {
      return spans.size();
    }

    /** How many groups of overlapping operations there were. */
    synchronized int roundTrips() {
      List<long[]> byStart = new ArrayList<>(spans);
      byStart.sort(Comparator.comparingLong(span -> span[0]));
      int rounds = 0;
      long roundEnds = Long.MIN_VALUE;
      for (long[] span : byStart) {
        if (span[0] > roundEnds) {
          rounds++;
        }
        roundEnds = Math.max(roundEnds, span[1]);
      }
      return rounds;
    }
  }

  @Test
  void curatorLayoutsKeepNoFenceStore() {
    for (LockLayout layout : LockLayout.values()) {
      LatchkeyBackend backend =
          closeAfter(
              ZooKeeperBackend.open(
                  URI.create(
                      ZooKeeperTestServers.uri(server.getConnectString(), NAMESPACE)
                          + "&layout="
                          + layout.option()),
                  context()));
      assertThat(backend.fences().isPresent())
          .as(layout.option())
          .isEqualTo(layout == LockLayout.LATCHKEY);
    }
  }

  private FenceStore fences() {
    LatchkeyBackend backend =
        closeAfter(
            ZooKeeperBackend.open(
                URI.create(ZooKeeperTestServers.uri(server.getConnectString(), NAMESPACE)),
                context()));
    return backend.fences().orElseThrow();
  }

  private Latchkey connect() {
    return closeAfter(
        Latchkey.connect(ZooKeeperTestServers.uri(server.getConnectString(), NAMESPACE)));
  }

  private <T extends AutoCloseable> T closeAfter(T closeable) {
    opened.add(closeable);
    return closeable;
  }

  private static BackendContext context() {
    return context("fences");
  }

  private static BackendContext context(String clientId) {
    return new BackendContext(clientId, Duration.ofSeconds(10), Duration.ofSeconds(30));
  }

  /**
   * Raises the lock's fence far above {@code first}'s token while a write is held back, then lets
   * the write go.
   *
   * @return the raised value
   */
  private static long raiseThenResume(
      FenceStore fences, String name, AcquireResult first, PausedWrites paused) throws Exception {
    long raised = first.fencingToken() + AHEAD;
    assertThat(raise(fences, name, raised)).isEqualTo(raised);
    paused.resume();
    return raised;
  }

  private static long raise(FenceStore fences, String name, long atLeast) throws Exception {
    return fences.raiseLockFence(name, atLeast).toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static long acquireAndRelease(Latchkey client, String name) throws Exception {
    Lease lease = client.lock(name).acquire(WAIT);
    long token = lease.fencingToken();
    lease.release();
    return token;
  }
}
