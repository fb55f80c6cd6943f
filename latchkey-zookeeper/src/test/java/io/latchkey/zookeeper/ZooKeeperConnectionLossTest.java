package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.BackendTimeoutException;
import io.latchkey.BackendUnavailableException;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyObserver;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LockMode;
import io.latchkey.LockTimeoutException;
import io.latchkey.Primitive;
import io.latchkey.servers.FreezableTcpProxy;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ResourceType;
import io.latchkey.testkit.LeaseTransitions;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Waiters and a lost connection: a waiting acquire goes on through a connection blip that the
 * session survives (keeping its queue node), starts over with a fresh node when the session is
 * lost, and when its wait ends while the connection is down it fails with the wait's timeout and
 * its node is deleted once the connection is back. A node that a failed call left in the session (a
 * permit's grant applied whose answer was lost, a release of a permit or a lock that never reached
 * the server) is deleted once the connection is back too. The server is one in-process ZooKeeper
 * that the tests stop and restart on the same port and data within the session timeout.
 */
class ZooKeeperConnectionLossTest {
  /** A tick that allows sessions of up to 10 s (20 ticks), which outlive a server restart. */
  private static final int TICK_MILLIS = 500;

  private static final int SESSION_MILLIS = 10_000;

  /** Short, so that a wait through a stopped server ends soon. */
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(2);

  /**
   * For the tests that cut a connection under a call: the call waits for the reconnection, which
   * the client starts after a random back-off of up to a second and a loaded machine stretches
   * further (2.4 s seen in a full build), and these tests are about what the call settles, not its
   * bound.
   */
  private static final Duration RECONNECTING_OPERATION_TIMEOUT = Duration.ofSeconds(8);

  private static final String NAMESPACE = "blips";
  private static final String NAME = "blip";
  private static final String DIR = "/" + NAMESPACE + ZooKeeperPaths.lockDir(NAME);

  private @Nullable TestingServer server;
  private final List<Latchkey> clients = new ArrayList<>();

  /** How many acquisitions of the test's clients have been refused once and wait. */
  private final AtomicInteger waits = new AtomicInteger();

  private final LatchkeyObserver waitCounter =
      new LatchkeyObserver() {
        @Override
        public AcquireObservation acquireStarted(Primitive primitive, String backend, String name) {
          return new AcquireObservation() {
            @Override
            public void waiting() {
              waits.incrementAndGet();
            }
          };
        }
      };
  private final List<CuratorFramework> curators = new ArrayList<>();
  private @Nullable CuratorFramework observer;

  @BeforeEach
  void startServer() throws Exception {
    server = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, TICK_MILLIS, 0), true);
  }

  @AfterEach
  void stopEverything() throws IOException {
    clients.forEach(Latchkey::close);
    curators.forEach(CuratorFramework::close);
    if (server != null) {
      server.close();
    }
  }

  @Test
  void aWaiterGoesOnThroughABlipAndKeepsItsQueueNode() throws Exception {
    Latchkey holder = connect(null);
    List<ConnectionState> waiterStates = new CopyOnWriteArrayList<>();
    Latchkey waiter = connect(waiterStates);
    Lease held = holder.lock(NAME).acquire(Duration.ofSeconds(5));
    List<String> heard = LeaseTransitions.of(held);
    CompletableFuture<Lease> waiting =
        waiter.lock(NAME).acquireAsync(Duration.ofSeconds(60)).toCompletableFuture();
    await().atMost(Duration.ofSeconds(10)).until(() -> children().size() == 2);
    String queued = children().get(1);
    long queuedToken = nodeToken(queued);

    server().stop();
    await().atMost(Duration.ofSeconds(10)).until(() -> !held.isValid());
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> waiterStates.contains(ConnectionState.SUSPENDED));
    server().restart();

    // The session survived: the holder resumes, the waiter still waits, in the same place.
    await().atMost(Duration.ofSeconds(20)).until(held::isValid);
    assertThat(heard).containsSubsequence("suspended", "resumed").doesNotContain("lost");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> waiterStates.contains(ConnectionState.RECONNECTED));
    assertThat(waiterStates)
        .containsSubsequence(ConnectionState.SUSPENDED, ConnectionState.RECONNECTED)
        .doesNotContain(ConnectionState.LOST);
    assertThat(waiting).isNotDone();
    assertThat(children()).containsExactly(children().get(0), queued);

    held.release();
    Lease next = waiting.get(20, TimeUnit.SECONDS);
    assertThat(next.fencingToken()).isEqualTo(queuedToken).isGreaterThan(held.fencingToken());
    next.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> children().isEmpty());
  }

  @Test
  void aWaiterWhoseSessionIsLostStartsOverWithAFreshNode() throws Exception {
    CuratorFramework waiterCurator = curator(new CopyOnWriteArrayList<>());
    waiterWhoseSessionIsLost(waiterCurator, using(waiterCurator, OPERATION_TIMEOUT));
  }

  /**
   * The same when Curator hears of the disconnection that comes before the expiry only after the
   * watches (see {@link #aWaiterWokenByTheDisconnectionBeforeCuratorHearsOfItSendsNothing}): a call
   * sent on the dead connection would be answered SESSIONEXPIRED only once the client has
   * reconnected, past the one-second operation timeout, and the wait would fail.
   */
  @Test
  void aWaiterWhoseSessionIsLostAfterCuratorHeardLastStartsOverWithAFreshNode() throws Exception {
    Duration operationTimeout = Duration.ofSeconds(1);
    CuratorFramework waiterCurator =
        curator(
            new CopyOnWriteArrayList<>(), null, new LateDisconnections()::open, operationTimeout);
    waiterWhoseSessionIsLost(waiterCurator, using(waiterCurator, operationTimeout));
  }

  /** A waiter's session expires: its node goes with it, and it queues again with a new one. */
  private void waiterWhoseSessionIsLost(CuratorFramework waiterCurator, Latchkey waiter)
      throws Exception {
    Latchkey holder = connect(null);
    Lease held = holder.lock(NAME).acquire(Duration.ofSeconds(5));
    CompletableFuture<Lease> waiting =
        waiter.lock(NAME).acquireAsync(Duration.ofSeconds(60)).toCompletableFuture();
    await().atMost(Duration.ofSeconds(10)).until(() -> children().size() == 2);
    String lostNode = children().get(1);

    expireOnTheServer(waiterCurator.getZookeeperClient().getZooKeeper());

    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> children().size() == 2 && !children().contains(lostNode));
    assertThat(waiting).isNotDone();
    String fresh = children().get(1);
    held.release();
    Lease next = waiting.get(20, TimeUnit.SECONDS);
    assertThat(next.fencingToken()).isEqualTo(nodeToken(fresh)).isGreaterThan(held.fencingToken());
    next.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> children().isEmpty());
  }

  @Test
  void aWaitThatEndsWhileTheConnectionIsDownTimesOutAndItsNodeGoesWhenTheConnectionIsBack()
      throws Exception {
    List<ConnectionState> waiterStates = new CopyOnWriteArrayList<>();
    Latchkey waiter = connect(waiterStates);
    waitThatEndsWhileTheConnectionIsDown(
        waiter, Duration.ofSeconds(3), () -> waiterStates.contains(ConnectionState.SUSPENDED));
  }

  /**
   * ZooKeeper hands its disconnection event to Curator (which then says "not connected") and to the
   * watches in no set order, and the waiter's watch wakes its attempt at once. Here Curator hears
   * of the disconnection only with the next event, so every watch hears it first: the attempt must
   * still send nothing (a call on the dead connection is answered only when the client's next
   * reconnection fails, one to two seconds later, past this client's one-second operation timeout)
   * and the wait must end as waits end, with a timeout of the wait.
   */
  @Test
  void aWaiterWokenByTheDisconnectionBeforeCuratorHearsOfItSendsNothing() throws Exception {
    Duration operationTimeout = Duration.ofSeconds(1);
    LateDisconnections late = new LateDisconnections();
    Latchkey waiter =
        using(
            curator(new CopyOnWriteArrayList<>(), null, late::open, operationTimeout),
            operationTimeout);
    waitThatEndsWhileTheConnectionIsDown(waiter, Duration.ofSeconds(4), () -> late.held.get() > 0);
  }

  /**
   * A waiter queues behind a holder, the server stops, and the wait runs out while it is down: a
   * timeout, as for any wait that ran out. Once the server is back, the given-up place is deleted
   * (within the session) and the waiter can take the lock.
   *
   * @param down whether the waiter's client has heard of the disconnection
   */
  private void waitThatEndsWhileTheConnectionIsDown(
      Latchkey waiter, Duration wait, java.util.concurrent.Callable<Boolean> down)
      throws Exception {
    Latchkey holder = connect(null);
    Lease held = holder.lock(NAME).acquire(Duration.ofSeconds(5));
    CompletableFuture<Lease> waiting = waiter.lock(NAME).acquireAsync(wait).toCompletableFuture();
    await().atMost(Duration.ofSeconds(10)).until(() -> children().size() == 2);
    String queued = children().get(1);

    timesOutWhileTheServerIsDown(waiting, down, held);
    await().atMost(Duration.ofSeconds(20)).until(() -> !children().contains(queued));
    assertThat(children()).hasSize(1);
    held.release();
    try (Lease again = waiter.lock(NAME).acquire(Duration.ofSeconds(10))) {
      assertThat(again.fencingToken()).isGreaterThan(held.fencingToken());
    }
  }

  /**
   * Hands ZooKeeper's disconnection events to Curator only together with the next event, as if
   * Curator were always the last to hear of them.
   */
  private static final class LateDisconnections {
    final AtomicInteger held = new AtomicInteger();

    // ZooKeeper's close() may throw InterruptedException; Curator closes it, not this class.
    @SuppressWarnings("try")
    ZooKeeper open(String connectString, int sessionTimeout, Watcher curator) throws IOException {
      // Touched on the handle's event thread only.
      List<org.apache.zookeeper.WatchedEvent> later = new ArrayList<>();
      return new ZooKeeper(
          connectString,
          sessionTimeout,
          event -> {
            if (event.getType() == Watcher.Event.EventType.None
                && event.getState() == Watcher.Event.KeeperState.Disconnected) {
              later.add(event);
              held.incrementAndGet();
              return;
            }
            later.forEach(curator::process);
            later.clear();
            curator.process(event);
          });
    }
  }

  @Test
  void aCreateWhoseAnswerIsLostIsSettledAsOneHold() throws Exception {
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", server().getPort())) {
      LosingAnswers losing = new LosingAnswers(proxy);
      Latchkey waiter = losingClient(proxy, losing);

      // The lock is free: the node is created as the grant, and the answer is lost. The next
      // attempt must take that node as this acquire's (one hold), not re-enter it (two holds,
      // which the engine would give back and acquire anew, on another node).
      losing.creates.set(true);
      CompletableFuture<Lease> acquiring =
          waiter.lock(NAME).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
      await().atMost(Duration.ofSeconds(10)).until(() -> losing.lost.get() == 1);
      String node = children().get(0);
      Stat created = nodeStat(node);
      Lease lease = acquiring.get(20, TimeUnit.SECONDS);
      assertThat(lease.fencingToken()).isEqualTo(token(created));
      assertThat(children()).containsExactly(node);
      assertThat(holds(node)).as("holds on the node").isEqualTo(1);
      lease.release();
      await().atMost(Duration.ofSeconds(10)).until(() -> children().isEmpty());
    }
  }

  @Test
  void aClaimWhoseAnswerIsLostIsMadeAgainWithoutASecondHold() throws Exception {
    Latchkey holder = connect(null);
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", server().getPort())) {
      LosingAnswers losing = new LosingAnswers(proxy);
      Latchkey waiter = losingClient(proxy, losing);
      Lease held = holder.lock(NAME).acquire(Duration.ofSeconds(5));
      CompletableFuture<Lease> waiting =
          waiter.lock(NAME).acquireAsync(Duration.ofSeconds(60)).toCompletableFuture();
      await().atMost(Duration.ofSeconds(10)).until(() -> children().size() == 2);
      String queued = children().get(1);
      // Marked waiting (a multi-op, as the claim is) before the claim's multi-op is armed.
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  LockNodeData.decode(observer().getData().forPath(DIR + "/" + queued)).waiting());

      // The woken waiter's claim (clearing "waiting", checking the directory's version) is
      // applied, its answer lost.
      losing.multis.set(true);
      held.release();
      Lease next = waiting.get(20, TimeUnit.SECONDS);
      assertThat(losing.lost.get()).isEqualTo(1);
      assertThat(next.fencingToken()).isEqualTo(nodeToken(queued));
      assertThat(holds(queued)).as("holds on the node").isEqualTo(1);
      next.release();
      await().atMost(Duration.ofSeconds(10)).until(() -> children().isEmpty());
    }
  }

  /**
   * A release that hands the lock to a queued waiter of its client ({@link
   * LockStore#releaseAndHandOver}) is applied, its answer lost: the waiter's own next attempt, once
   * the connection is back, takes its node (claimed by the lost multi-op) as one hold.
   */
  @Test
  void aHandOverToAQueuedWaiterWhoseAnswerIsLostIsTakenByTheWaitersAttempt() throws Exception {
    handOverWhoseAnswerIsLost(true, false);
  }

  /** The same for a waiter that had no node: the node the lost multi-op created is its own. */
  @Test
  void aNodeCreatedByAHandOverWhoseAnswerIsLostIsTakenByTheWaitersAttempt() throws Exception {
    handOverWhoseAnswerIsLost(false, false);
  }

  /** A waiter that gives up instead: the node the lost multi-op created for it is deleted. */
  @Test
  void aNodeCreatedByAHandOverWhoseAnswerIsLostGoesWhenTheWaiterGivesUp() throws Exception {
    handOverWhoseAnswerIsLost(false, true);
  }

  private void handOverWhoseAnswerIsLost(boolean queued, boolean givesUp) throws Exception {
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", server().getPort())) {
      LosingAnswers losing = new LosingAnswers(proxy);
      CuratorFramework curator =
          curator(
              new CopyOnWriteArrayList<>(), proxy, losing::open, RECONNECTING_OPERATION_TIMEOUT);
      try (LatchkeyBackend backend =
          ZooKeeperBackend.builder(curator)
              .namespace(NAMESPACE)
              .build()
              .open(
                  new BackendContext(
                      "lossy", RECONNECTING_OPERATION_TIMEOUT, Duration.ofSeconds(30)))) {
        LockStore locks = backend.locks();
        LockRequest a = handOverRequest("lossy:a");
        LockRequest b = handOverRequest("lossy:b");
        AcquireResult held = get(locks.tryAcquire(a));
        assertThat(held.isGranted()).isTrue();
        if (queued) {
          assertThat(get(locks.tryAcquire(b)).isGranted()).isFalse();
        }

        losing.multis.set(true);
        GrantRef grant =
            new GrantRef(new HolderRef(ResourceType.LOCK, NAME, a.owner()), held.fencingToken());
        assertThatThrownBy(() -> get(locks.releaseAndHandOver(grant, LockMode.EXCLUSIVE, b)))
            .hasRootCauseInstanceOf(KeeperException.ConnectionLossException.class);
        assertThat(losing.lost.get()).isEqualTo(1);
        // Applied: A's node is gone, B's is the only one.
        String node = children().get(0);
        assertThat(children()).containsExactly(node);

        if (givesUp) {
          get(locks.leaveQueue(NAME, b.owner()));
          await().atMost(Duration.ofSeconds(20)).until(() -> children().isEmpty());
          return;
        }
        AtomicReference<AcquireResult> taken = new AtomicReference<>();
        await()
            .atMost(Duration.ofSeconds(20))
            .until(
                () -> {
                  AcquireResult attempt = get(locks.tryAcquire(b));
                  taken.set(attempt);
                  return attempt.isGranted();
                });
        long token = Objects.requireNonNull(taken.get()).fencingToken();
        assertThat(token).isEqualTo(nodeToken(node));
        assertThat(children()).containsExactly(node);
        assertThat(holds(node)).as("holds on the node").isEqualTo(1);
        GrantRef next = new GrantRef(new HolderRef(ResourceType.LOCK, NAME, b.owner()), token);
        assertThat(get(locks.release(next, LockMode.EXCLUSIVE)).remainingHolds()).isZero();
        await().atMost(Duration.ofSeconds(10)).until(() -> children().isEmpty());
      }
    }
  }

  private static LockRequest handOverRequest(String owner) {
    return new LockRequest(NAME, owner, LockMode.EXCLUSIVE, 30_000, true, 30_000);
  }

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  @Test
  void aPermitWhoseGrantWasAppliedButNeverAnsweredIsGivenBackOnceTheConnectionIsBack()
      throws Exception {
    Latchkey other = connect(null);
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", server().getPort())) {
      LosingAnswers losing = new LosingAnswers(proxy);
      Latchkey taker = losingClient(proxy, losing);
      assertThat(taker.leasedSemaphore(NAME).trySetPermits(1)).isTrue();

      // The grant's multi-op is applied, its answer lost: a try that does not wait fails, and the
      // session, which survives the blip, still has the permit's node that nobody knows of.
      losing.multis.set(true);
      CompletableFuture<Lease> taking =
          taker.leasedSemaphore(NAME).acquireAsync(Duration.ZERO).toCompletableFuture();
      ExecutionException failed =
          org.junit.jupiter.api.Assertions.assertThrows(
              ExecutionException.class, () -> taking.get(20, TimeUnit.SECONDS));
      assertThat(failed.getCause()).isInstanceOf(BackendUnavailableException.class);
      assertThat(losing.lost.get()).isEqualTo(1);

      // The taker's client deletes it once it is connected again; the permit is free for others.
      await().atMost(Duration.ofSeconds(20)).until(() -> permits().isEmpty());
      try (Lease lease = other.leasedSemaphore(NAME).acquire(Duration.ofSeconds(10))) {
        assertThat(lease.isValid()).isTrue();
      }
    }
  }

  /**
   * The same for an acquire that waits, with an explicit lease (a TTL node, which no session takes
   * away): the wait goes on through the blip, and keeps its permit id, so the node the lost grant
   * made is deleted first (its time to live ran from before this attempt's lease clock, and a
   * delete sent later could take the new node) and the permit is taken anew, once.
   */
  @Test
  void aWaitingPermitWhoseGrantWasAppliedButNeverAnsweredIsTakenAnewOnceTheConnectionIsBack()
      throws Exception {
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", server().getPort())) {
      LosingAnswers losing = new LosingAnswers(proxy);
      Latchkey taker = losingClient(proxy, losing);
      assertThat(taker.leasedSemaphore(NAME).trySetPermits(1)).isTrue();

      losing.multis.set(true);
      Lease lease =
          taker
              .leasedSemaphore(NAME)
              .acquireAsync(Duration.ofSeconds(30), Duration.ofSeconds(30))
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      assertThat(losing.lost.get()).isEqualTo(1);

      assertThat(permits()).singleElement().isEqualTo(permitNode(lease));
      assertThat(permitToken(lease)).isEqualTo(lease.fencingToken());
      lease.release();
      assertThat(permits()).isEmpty();
    }
  }

  /**
   * A waiter on a full leased semaphore goes on waiting while the server is stopped and restarted
   * (its session survives), and is granted when a permit is released after the restart. (Passed
   * before the fix too: the restart comes within Curator's connection timeout, for which a call
   * sent while disconnected is held back; the next test is the one the fix is needed for.)
   */
  @Test
  void aLeasedSemaphoreWaiterGoesOnThroughAServerRestart() throws Exception {
    List<ConnectionState> waiterStates = new CopyOnWriteArrayList<>();
    leasedSemaphoreWaiterThroughARestart(
        connect(waiterStates),
        waiterStates,
        () -> waiterStates.contains(ConnectionState.SUSPENDED));
  }

  /**
   * The same when Curator hears of the disconnection after the waiter's watch (see {@link
   * #aWaiterWokenByTheDisconnectionBeforeCuratorHearsOfItSendsNothing}): the woken attempt must
   * send nothing, and wait for the connection.
   */
  @Test
  void aLeasedSemaphoreWaiterWokenByTheDisconnectionFirstGoesOnThroughAServerRestart()
      throws Exception {
    Duration operationTimeout = Duration.ofSeconds(1);
    LateDisconnections late = new LateDisconnections();
    List<ConnectionState> waiterStates = new CopyOnWriteArrayList<>();
    Latchkey waiter =
        using(curator(waiterStates, null, late::open, operationTimeout), operationTimeout);
    leasedSemaphoreWaiterThroughARestart(waiter, waiterStates, () -> late.held.get() > 0);
  }

  /**
   * @param down whether the waiter's client has heard of the disconnection
   */
  private void leasedSemaphoreWaiterThroughARestart(
      Latchkey waiter,
      List<ConnectionState> waiterStates,
      java.util.concurrent.Callable<Boolean> down)
      throws Exception {
    Lease held = holdTheOnlyPermit();
    CompletableFuture<Lease> waiting =
        waiter.leasedSemaphore(NAME).acquireAsync(Duration.ofSeconds(60)).toCompletableFuture();
    await().atMost(Duration.ofSeconds(10)).until(() -> waits.get() > 0);

    restartServer(waiterStates, down);
    await().atMost(Duration.ofSeconds(20)).until(held::isValid);
    releaseTo(held, waiting);
  }

  /**
   * A waiter on a full leased semaphore whose session is ended on the server goes on waiting in its
   * new session, and is granted when a permit is released.
   */
  @Test
  void aLeasedSemaphoreWaiterWhoseSessionIsLostGoesOnWaiting() throws Exception {
    CuratorFramework waiterCurator = curator(new CopyOnWriteArrayList<>());
    Latchkey waiter = using(waiterCurator, OPERATION_TIMEOUT);
    Lease held = holdTheOnlyPermit();
    CompletableFuture<Lease> waiting =
        waiter
            .leasedSemaphore(NAME)
            .acquireAsync(Duration.ofSeconds(60), Duration.ofSeconds(30))
            .toCompletableFuture();
    await().atMost(Duration.ofSeconds(10)).until(() -> waits.get() > 0);
    long expired = waiterCurator.getZookeeperClient().getZooKeeper().getSessionId();

    expireOnTheServer(waiterCurator.getZookeeperClient().getZooKeeper());

    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                waiterCurator.getZookeeperClient().isConnected()
                    && waiterCurator.getZookeeperClient().getZooKeeper().getSessionId() != expired);
    releaseTo(held, waiting);
  }

  /** A waiter whose wait ends while the server is down gets the wait's timeout, not a failure. */
  @Test
  void aLeasedSemaphoreWaitThatEndsWhileTheConnectionIsDownTimesOut() throws Exception {
    List<ConnectionState> waiterStates = new CopyOnWriteArrayList<>();
    Latchkey waiter = connect(waiterStates);
    Lease held = holdTheOnlyPermit();
    CompletableFuture<Lease> waiting =
        waiter.leasedSemaphore(NAME).acquireAsync(Duration.ofSeconds(3)).toCompletableFuture();
    await().atMost(Duration.ofSeconds(10)).until(() -> waits.get() > 0);

    timesOutWhileTheServerIsDown(
        waiting, () -> waiterStates.contains(ConnectionState.SUSPENDED), held);
    held.release();
  }

  /**
   * Stops the server until the waiter's client heard of it ({@code down}); the wait ends with its
   * timeout meanwhile. Then starts it again, until the holder's lease is valid again.
   */
  private void timesOutWhileTheServerIsDown(
      CompletableFuture<Lease> waiting, java.util.concurrent.Callable<Boolean> down, Lease held)
      throws Exception {
    server().stop();
    await().atMost(Duration.ofSeconds(10)).until(down);
    ExecutionException failed =
        org.junit.jupiter.api.Assertions.assertThrows(
            ExecutionException.class, () -> waiting.get(20, TimeUnit.SECONDS));
    assertThat(failed.getCause()).isInstanceOf(LockTimeoutException.class);
    server().restart();
    await().atMost(Duration.ofSeconds(20)).until(held::isValid);
  }

  /** Another client takes the only permit of the leased semaphore {@link #NAME}. */
  private Lease holdTheOnlyPermit() throws Exception {
    Latchkey holder = connect(null);
    assertThat(holder.leasedSemaphore(NAME).trySetPermits(1)).isTrue();
    return holder.leasedSemaphore(NAME).acquire(Duration.ofSeconds(5));
  }

  /**
   * The holder of the only permit releases it, and the waiter, still waiting, is granted: the one
   * permit node is its own, with a later token.
   */
  private void releaseTo(Lease held, CompletableFuture<Lease> waiting) throws Exception {
    assertThat(waiting).isNotDone();
    held.release();
    Lease next = waiting.get(20, TimeUnit.SECONDS);
    assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
    assertThat(permits()).singleElement().isEqualTo(permitNode(next));
    next.release();
  }

  /**
   * Stops the server until the waiter's client heard of it ({@code down}), and starts it again
   * until that client is reconnected.
   */
  private void restartServer(
      List<ConnectionState> waiterStates, java.util.concurrent.Callable<Boolean> down)
      throws Exception {
    server().stop();
    await().atMost(Duration.ofSeconds(10)).until(down);
    server().restart();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> waiterStates.contains(ConnectionState.RECONNECTED));
  }

  /**
   * A semaphore's waiter and a latch's awaiting caller go on through a server restart: the one is
   * granted when permits are added, the other answered when the count reaches zero, after it.
   */
  @Test
  void aSemaphoreWaiterAndALatchAwaiterGoOnThroughAServerRestart() throws Exception {
    Latchkey other = connect(null);
    List<ConnectionState> waiterStates = new CopyOnWriteArrayList<>();
    Latchkey waiter = connect(waiterStates);
    assertThat(other.semaphore(NAME).trySetPermits(0)).isTrue();
    assertThat(other.countDownLatch(NAME).trySetCount(1)).isTrue();
    CompletableFuture<Void> acquiring =
        waiter.semaphore(NAME).acquireAsync(1, Duration.ofSeconds(60)).toCompletableFuture();
    CompletableFuture<Boolean> awaiting =
        waiter.countDownLatch(NAME).awaitAsync(Duration.ofSeconds(60)).toCompletableFuture();
    await().atMost(Duration.ofSeconds(10)).until(() -> waits.get() == 2);

    restartServer(waiterStates, () -> waiterStates.contains(ConnectionState.SUSPENDED));
    assertThat(acquiring).isNotDone();
    assertThat(awaiting).isNotDone();

    other.semaphore(NAME).addPermits(1);
    other.countDownLatch(NAME).countDown();
    acquiring.get(20, TimeUnit.SECONDS);
    assertThat(awaiting.get(20, TimeUnit.SECONDS)).isTrue();
    assertThat(other.semaphore(NAME).availablePermits()).isZero();
  }

  @Test
  void aPermitWhoseReleaseNeverReachedTheServerIsReleasedOnceTheConnectionIsBack()
      throws Exception {
    Latchkey other = connect(null);
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", server().getPort())) {
      Latchkey holder = proxiedClient(proxy);
      assertThat(holder.leasedSemaphore(NAME).trySetPermits(1)).isTrue();
      Lease held = holder.leasedSemaphore(NAME).acquire(Duration.ofSeconds(10));
      assertThat(permits()).hasSize(1);

      releaseThatNeverArrives(proxy, held);

      await().atMost(Duration.ofSeconds(20)).until(() -> permits().isEmpty());
      try (Lease lease = other.leasedSemaphore(NAME).acquire(Duration.ofSeconds(10))) {
        assertThat(lease.isValid()).isTrue();
      }
    }
  }

  @Test
  void aTryLockWhoseCreateWasAppliedButNeverAnsweredLeavesNoNodeBehind() throws Exception {
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", server().getPort())) {
      LosingAnswers losing = new LosingAnswers(proxy);
      Latchkey trier = losingClient(proxy, losing);

      // A try that does not wait: its create is applied as the grant of the free lock, its answer
      // lost, so the try fails. Its thread never comes back to this lock.
      losing.creates.set(true);
      org.junit.jupiter.api.Assertions.assertThrows(
          BackendUnavailableException.class, () -> trier.lock(NAME).tryLock());
      assertThat(losing.lost.get()).isEqualTo(1);

      // The trier's client deletes the node once it is connected again; the lock is free.
      await().atMost(Duration.ofSeconds(20)).until(() -> children().isEmpty());
      try (Lease lease = connect(null).lock(NAME).acquire(Duration.ofSeconds(10))) {
        assertThat(lease.isValid()).isTrue();
      }
    }
  }

  @Test
  void aLockWhoseReleaseNeverReachedTheServerIsFreedOnceTheConnectionIsBack() throws Exception {
    Latchkey other = connect(null);
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", server().getPort())) {
      Latchkey holder = proxiedClient(proxy);
      Lease held = holder.lock(NAME).acquire(Duration.ofSeconds(10));
      assertThat(children()).hasSize(1);

      releaseThatNeverArrives(proxy, held);

      await().atMost(Duration.ofSeconds(20)).until(() -> children().isEmpty());
      try (Lease lease = other.lock(NAME).acquire(Duration.ofSeconds(10))) {
        assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
      }
    }
  }

  @Test
  void aReleaseOfOneOfTwoHoldsThatNeverReachedTheServerLeavesNoHoldBehind() throws Exception {
    releaseOneOfTwoHoldsThatNeverArrives(false);
  }

  @Test
  void aReEntryAfterAReleaseThatNeverReachedTheServerCountsTheHoldsRight() throws Exception {
    releaseOneOfTwoHoldsThatNeverArrives(true);
  }

  /**
   * The release of the inner of two holds never reaches the server, and the engine counts it
   * released; once the connection is back, the owner may come back once more (re-entry, and its
   * release), and the outer release is the last: the lock must then be free.
   */
  private void releaseOneOfTwoHoldsThatNeverArrives(boolean reEnter) throws Exception {
    Latchkey other = connect(null);
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", server().getPort())) {
      List<ConnectionState> states = new CopyOnWriteArrayList<>();
      Latchkey holder = using(curator(states, proxy, null, OPERATION_TIMEOUT), OPERATION_TIMEOUT);
      Lease outer = holder.lock(NAME).acquire(Duration.ofSeconds(10));
      Lease inner = holder.lock(NAME).acquire(Duration.ofSeconds(10));
      assertThat(holds(children().get(0))).isEqualTo(2);
      releaseThatNeverArrives(proxy, inner);
      awaitReconnected(states, outer);
      if (reEnter) {
        Lease again = holder.lock(NAME).acquire(Duration.ofSeconds(10));
        assertThat(holds(children().get(0))).as("holds as the engine counts them").isEqualTo(2);
        again.release();
      }
      outer.release();
      assertFreedFor(other, outer);
    }
  }

  @Test
  void aReleaseOfOneOfTwoHoldsAppliedButNeverAnsweredIsNotTakenOffTwice() throws Exception {
    try (FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", server().getPort())) {
      LosingAnswers losing = new LosingAnswers(proxy);
      List<ConnectionState> states = new CopyOnWriteArrayList<>();
      Latchkey holder =
          using(
              curator(states, proxy, losing::open, RECONNECTING_OPERATION_TIMEOUT),
              RECONNECTING_OPERATION_TIMEOUT);
      Lease outer = holder.lock(NAME).acquire(Duration.ofSeconds(10));
      Lease inner = holder.lock(NAME).acquire(Duration.ofSeconds(10));
      Lease third = holder.lock(NAME).acquire(Duration.ofSeconds(10));
      String node = children().get(0);

      // The write that takes one hold off is applied, its answer lost.
      losing.writes.set(true);
      org.junit.jupiter.api.Assertions.assertThrows(
          BackendUnavailableException.class, third::release);
      assertThat(losing.lost.get()).isEqualTo(1);
      assertThat(holds(node)).isEqualTo(2);
      awaitReconnected(states, outer);

      // The next release takes one more off, not two: the lock is still held until the last.
      inner.release();
      assertThat(children()).containsExactly(node);
      assertThat(holds(node)).isEqualTo(1);
      outer.release();
      assertFreedFor(connect(null), outer);
    }
  }

  @Test
  void aLateSessionExpiredAnswerDoesNotLoseTheNewSessionsGrant() throws Exception {
    List<ConnectionState> states = new CopyOnWriteArrayList<>();
    StaleAnswers stale = new StaleAnswers();
    CuratorFramework curator = curator(states, null, stale::open, OPERATION_TIMEOUT);
    Latchkey client = using(curator, OPERATION_TIMEOUT);
    Lease old = client.lock(NAME).acquire(Duration.ofSeconds(5));

    // A real expiry: the old grant is lost, and the client goes on in a new session.
    expireOnTheServer(curator.getZookeeperClient().getZooKeeper());
    await().atMost(Duration.ofSeconds(20)).until(() -> !old.isValid());
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                states.lastIndexOf(ConnectionState.RECONNECTED)
                    > states.indexOf(ConnectionState.LOST));
    Lease fresh = client.lock(NAME).acquire(Duration.ofSeconds(10));
    List<String> heard = LeaseTransitions.of(fresh);
    String node = children().get(0);

    // A call of the old session answered late with SESSIONEXPIRED: Curator posts LOST although
    // the new session lives, then a SESSIONMOVED answer makes it post RECONNECTED, which the
    // backend hears after the LOST (one thread delivers the states in order).
    int lostBefore = count(states, ConnectionState.LOST);
    int reconnectedBefore = count(states, ConnectionState.RECONNECTED);
    stale.answers.add(KeeperException.Code.SESSIONEXPIRED);
    stale.answers.add(KeeperException.Code.SESSIONMOVED);
    for (int i = 0; i < 2; i++) {
      org.junit.jupiter.api.Assertions.assertThrows(
          BackendUnavailableException.class, () -> client.lock("other").tryLock());
    }
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                count(states, ConnectionState.LOST) > lostBefore
                    && count(states, ConnectionState.RECONNECTED) > reconnectedBefore);

    // The grant of the new session is still held, its node still there, and released cleanly.
    assertThat(heard).doesNotContain("lost");
    assertThat(fresh.isValid()).isTrue();
    assertThat(children()).containsExactly(node);
    fresh.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> children().isEmpty());
  }

  /**
   * Waits until a client whose connection was cut is connected again (the cut suspends it at once)
   * and its lease is valid again.
   */
  private static void awaitReconnected(List<ConnectionState> states, Lease held) {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                states.lastIndexOf(ConnectionState.RECONNECTED)
                    > states.lastIndexOf(ConnectionState.SUSPENDED));
    await().atMost(Duration.ofSeconds(20)).until(held::isValid);
  }

  /** The lock's node goes, and another client gets the lock after {@code last}. */
  private void assertFreedFor(Latchkey other, Lease last) throws Exception {
    await().atMost(Duration.ofSeconds(20)).until(() -> children().isEmpty());
    try (Lease lease = other.lock(NAME).acquire(Duration.ofSeconds(10))) {
      assertThat(lease.fencingToken()).isGreaterThan(last.fencingToken());
    }
  }

  private static int count(List<ConnectionState> states, ConnectionState state) {
    return (int) states.stream().filter(state::equals).count();
  }

  /**
   * Answers the next listings of the directory of the lock "other" with the codes queued in {@link
   * #answers} instead of their real ones, as late answers of an old session's calls would come.
   */
  private static final class StaleAnswers {
    final java.util.Queue<KeeperException.Code> answers =
        new java.util.concurrent.ConcurrentLinkedQueue<>();

    // ZooKeeper's close() may throw InterruptedException; Curator closes it, not this class.
    @SuppressWarnings("try")
    ZooKeeper open(String connectString, int sessionTimeout, Watcher watcher) throws IOException {
      String otherDir = ZooKeeperPaths.lockDir("other");
      return new ZooKeeper(connectString, sessionTimeout, watcher) {
        @Override
        public void getChildren(
            String path, @Nullable Watcher watch, AsyncCallback.Children2Callback cb, Object ctx) {
          super.getChildren(
              path,
              watch,
              (rc, at, context, children, stat) -> {
                KeeperException.Code instead = at.endsWith(otherDir) ? answers.poll() : null;
                if (instead != null) {
                  cb.processResult(instead.intValue(), at, context, null, null);
                } else {
                  cb.processResult(rc, at, context, children, stat);
                }
              },
              ctx);
        }
      };
    }
  }

  /**
   * Releases a lease through a frozen link, past the release's timeout, then cuts the link: the
   * delete never reached the server, and the session, which survives, keeps the node.
   */
  private static void releaseThatNeverArrives(FreezableTcpProxy proxy, Lease held) {
    proxy.freeze();
    org.junit.jupiter.api.Assertions.assertThrows(BackendTimeoutException.class, held::release);
    proxy.cut();
    proxy.unfreeze();
  }

  /**
   * Hands the first armed create or data write of a lock node (or multi-op: a leased permit's
   * grant, a lock node's claim or hand-over) that succeeded a CONNECTIONLOSS answer instead of its
   * real one, and cuts the connection at that moment: the server applied the call, the client never
   * heard, as when a connection breaks between the request and its reply.
   */
  private static final class LosingAnswers {
    final AtomicBoolean creates = new AtomicBoolean();
    final AtomicBoolean writes = new AtomicBoolean();
    final AtomicBoolean multis = new AtomicBoolean();
    final AtomicInteger lost = new AtomicInteger();
    private final FreezableTcpProxy proxy;

    LosingAnswers(FreezableTcpProxy proxy) {
      this.proxy = proxy;
    }

    /** Whether this answer is the one to lose: an applied call on a lock node, once armed. */
    boolean lose(AtomicBoolean armed, int rc, String path) {
      return path.contains("/" + ZooKeeperPaths.LOCK_NODE_PREFIX) && lose(armed, rc);
    }

    /** Whether this answer is the one to lose: an applied call, once armed. */
    boolean lose(AtomicBoolean armed, int rc) {
      if (rc == KeeperException.Code.OK.intValue() && armed.compareAndSet(true, false)) {
        proxy.cut();
        lost.incrementAndGet();
        return true;
      }
      return false;
    }

    // ZooKeeper's close() may throw InterruptedException; Curator closes it, not this class.
    @SuppressWarnings("try")
    ZooKeeper open(String connectString, int sessionTimeout, Watcher watcher) throws IOException {
      int lossCode = KeeperException.Code.CONNECTIONLOSS.intValue();
      return new ZooKeeper(connectString, sessionTimeout, watcher) {
        @Override
        public void create(
            String path,
            byte[] data,
            List<ACL> acl,
            CreateMode mode,
            AsyncCallback.Create2Callback cb,
            Object ctx,
            long ttl) {
          super.create(
              path,
              data,
              acl,
              mode,
              (rc, at, context, name, stat) -> {
                if (lose(creates, rc, at)) {
                  cb.processResult(lossCode, at, context, null, null);
                } else {
                  cb.processResult(rc, at, context, name, stat);
                }
              },
              ctx,
              ttl);
        }

        @Override
        public void multi(Iterable<Op> ops, AsyncCallback.MultiCallback cb, Object ctx) {
          super.multi(
              ops,
              (rc, at, context, results) -> {
                if (lose(multis, rc)) {
                  cb.processResult(lossCode, at, context, null);
                } else {
                  cb.processResult(rc, at, context, results);
                }
              },
              ctx);
        }

        @Override
        public void setData(
            String path, byte[] data, int version, AsyncCallback.StatCallback cb, Object ctx) {
          super.setData(
              path,
              data,
              version,
              (rc, at, context, stat) -> {
                if (lose(writes, rc, at)) {
                  cb.processResult(lossCode, at, context, null);
                } else {
                  cb.processResult(rc, at, context, stat);
                }
              },
              ctx);
        }
      };
    }
  }

  private int holds(String child) throws Exception {
    return LockNodeData.decode(observer().getData().forPath(DIR + "/" + child)).exclusive();
  }

  /**
   * Ends a session on the server, as its timeout would: a second handle on the same session closes
   * it, its ephemeral nodes go at once, and its own client hears that it expired.
   */
  private void expireOnTheServer(ZooKeeper session) throws Exception {
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper twin =
        new ZooKeeper(
            server().getConnectString(),
            SESSION_MILLIS,
            event -> {
              if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
              }
            },
            session.getSessionId(),
            session.getSessionPasswd());
    try {
      assertThat(connected.await(10, TimeUnit.SECONDS)).isTrue();
    } finally {
      twin.close();
    }
  }

  /** A client over a Curator client of the test's own, whose connection states are recorded. */
  private Latchkey connect(@Nullable List<ConnectionState> states) throws InterruptedException {
    return using(
        curator(states == null ? new CopyOnWriteArrayList<>() : states), OPERATION_TIMEOUT);
  }

  private Latchkey using(CuratorFramework curator, Duration operationTimeout) {
    Latchkey client =
        Latchkey.using(
            ZooKeeperBackend.builder(curator).namespace(NAMESPACE).build(),
            LatchkeyOptions.builder()
                .operationTimeout(operationTimeout)
                .observer(waitCounter)
                .closeOnShutdown(false)
                .build());
    clients.add(client);
    return client;
  }

  /** A client through the proxy whose calls {@code losing} loses the answer of, once armed. */
  private Latchkey losingClient(FreezableTcpProxy proxy, LosingAnswers losing)
      throws InterruptedException {
    return using(
        curator(new CopyOnWriteArrayList<>(), proxy, losing::open, RECONNECTING_OPERATION_TIMEOUT),
        RECONNECTING_OPERATION_TIMEOUT);
  }

  /** Opens the ZooKeeper handles of a test's Curator client. */
  private interface ZooKeeperOpener {
    ZooKeeper open(String connectString, int sessionTimeout, Watcher watcher) throws IOException;
  }

  /** A client through the proxy. */
  private Latchkey proxiedClient(FreezableTcpProxy proxy) throws InterruptedException {
    return using(
        curator(new CopyOnWriteArrayList<>(), proxy, null, OPERATION_TIMEOUT), OPERATION_TIMEOUT);
  }

  /** Like the client the URI builds: no retries, so that nothing is sent twice. */
  private CuratorFramework curator(List<ConnectionState> states) throws InterruptedException {
    return curator(states, null, null, OPERATION_TIMEOUT);
  }

  private CuratorFramework curator(
      List<ConnectionState> states,
      @Nullable FreezableTcpProxy proxy,
      @Nullable ZooKeeperOpener opener,
      Duration operationTimeout)
      throws InterruptedException {
    CuratorFrameworkFactory.Builder builder =
        CuratorFrameworkFactory.builder()
            .connectString(
                proxy == null ? server().getConnectString() : proxy.host() + ":" + proxy.port())
            .sessionTimeoutMs(SESSION_MILLIS)
            // As the URI's default: three quarters of the operation timeout.
            .connectionTimeoutMs((int) operationTimeout.toMillis() * 3 / 4)
            .retryPolicy(new RetryNTimes(0, 0));
    if (opener != null) {
      builder.zookeeperFactory(
          (connectString, sessionTimeout, watcher, canBeReadOnly) ->
              opener.open(connectString, sessionTimeout, watcher));
    }
    CuratorFramework curator = builder.build();
    curators.add(curator);
    curator.getConnectionStateListenable().addListener((client, state) -> states.add(state));
    curator.start();
    assertThat(curator.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
    return curator;
  }

  /** The lock directory's children in queue order, read by a client of the test's own. */
  private List<String> children() throws Exception {
    try {
      return LockNode.sorted(observer().getChildren().forPath(DIR)).stream()
          .map(LockNode::name)
          .toList();
    } catch (KeeperException.NoNodeException gone) {
      // The directory is a container, which the server removes (at any time) once it is empty.
      return List.of();
    }
  }

  /** The permit nodes of the leased semaphore {@link #NAME}. */
  private List<String> permits() throws Exception {
    String semaphore = "/" + NAMESPACE + ZooKeeperPaths.leasedSemaphore(NAME);
    if (observer().checkExists().forPath(semaphore) == null) {
      return List.of();
    }
    return observer().getChildren().forPath(semaphore);
  }

  /** The node name of a leased permit. */
  private static String permitNode(Lease permit) {
    String path = ZooKeeperPaths.permit(NAME, permit.holderId());
    return path.substring(path.lastIndexOf('/') + 1);
  }

  /** The fencing token of a grant on the permit's node. */
  private long permitToken(Lease permit) throws Exception {
    return token(stat("/" + NAMESPACE + ZooKeeperPaths.permit(NAME, permit.holderId())));
  }

  /** The fencing token of a grant on a node of the lock's directory. */
  private long nodeToken(String child) throws Exception {
    return token(nodeStat(child));
  }

  private Stat nodeStat(String child) throws Exception {
    return stat(DIR + "/" + child);
  }

  private Stat stat(String path) throws Exception {
    Stat stat = observer().checkExists().forPath(path);
    assertThat(stat).as(path).isNotNull();
    return stat;
  }

  /** The token of a grant on a node, once a grant made the data's token base. */
  private long token(Stat node) throws Exception {
    return ZooKeeperTestServers.fencingToken(observer(), NAMESPACE, node);
  }

  private CuratorFramework observer() throws InterruptedException {
    if (observer == null) {
      CuratorFramework started =
          CuratorFrameworkFactory.builder()
              .connectString(server().getConnectString())
              .sessionTimeoutMs(SESSION_MILLIS)
              .retryPolicy(new RetryNTimes(20, 250))
              .build();
      curators.add(started);
      started.start();
      assertThat(started.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
      observer = started;
    }
    return observer;
  }

  private TestingServer server() {
    if (server == null) {
      throw new IllegalStateException("the server has not been started");
    }
    return server;
  }
}
