package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.OwnerToken;
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
import io.latchkey.testkit.ContendedCycles;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The default layout hands a released lock to a waiter of the releasing client in the release's own
 * multi-op ({@link LockStore#releaseAndHandOver}), on a real server: a queued head (its place
 * claimed) and a waiter with no node yet (its node created) are granted without an attempt of their
 * own; a waiter of another client queued ahead keeps its turn; and eight threads of one client on
 * one lock send fewer requests per cycle than with plain releases.
 */
class ZooKeeperHandOverTest {
  private static final String CLIENT = "hand-over";
  private static final int THREADS = 8;
  private static final int CYCLES_PER_THREAD = 25;

  private static TestingServer server;
  private final List<LatchkeyBackend> backends = new ArrayList<>();

  @BeforeAll
  static void startServer() {
    // srvr tells how many requests the server received.
    System.setProperty("zookeeper.4lw.commands.whitelist", "srvr");
    server = ZooKeeperTestServers.start();
  }

  @AfterAll
  static void stopServer() throws IOException {
    server.close();
  }

  @AfterEach
  void closeBackends() {
    backends.forEach(LatchkeyBackend::close);
  }

  @Test
  void onlyTheDefaultLayoutHandsOver() {
    for (LockLayout layout : LockLayout.values()) {
      LatchkeyBackend backend = open("layouts-" + layout.option(), "?layout=" + layout.option());
      assertThat(backend.locks().handsOver()).as(layout.option()).isEqualTo(layout.listable());
    }
  }

  /**
   * A holds, B and C queue. A's release with B's attempt grants B (its place was just behind A), in
   * one call; C stays queued and takes the lock after B by its own attempt.
   */
  @Test
  void aQueuedHeadIsGrantedInTheRelease() throws Exception {
    LatchkeyBackend backend = open("queued", "");
    LockStore locks = backend.locks();
    String name = "queued";
    AcquireResult a = get(locks.tryAcquire(request(name, "a")));
    assertThat(a.isGranted()).isTrue();
    assertThat(get(locks.tryAcquire(request(name, "b"))).isGranted()).isFalse();
    assertThat(get(locks.tryAcquire(request(name, "c"))).isGranted()).isFalse();

    HandOverResult handedOver =
        get(locks.releaseAndHandOver(grant(name, "a", a), LockMode.EXCLUSIVE, request(name, "b")));
    assertThat(handedOver.released()).isEqualTo(ReleaseResult.released(0));
    AcquireResult b = Objects.requireNonNull(handedOver.next(), "B's attempt was not made");
    assertThat(b.isGranted()).isTrue();
    assertThat(b.fencingToken()).isGreaterThan(a.fencingToken());
    assertHeldBy(backend, name, "b", 1);

    assertThat(get(locks.tryAcquire(request(name, "c"))).isGranted()).isFalse();
    assertThat(get(locks.release(grant(name, "b", b), LockMode.EXCLUSIVE)).wasHeld()).isTrue();
    AcquireResult c = get(locks.tryAcquire(request(name, "c")));
    assertThat(c.isGranted()).isTrue();
    assertThat(c.fencingToken()).isGreaterThan(b.fencingToken());
  }

  /**
   * A waiter that never made an attempt (it waited in its own client, without a node) is granted on
   * a node the release creates, with a larger token; its release leaves the directory empty.
   */
  @Test
  void aWaiterWithNoNodeIsGrantedInTheRelease() throws Exception {
    LatchkeyBackend backend = open("no-node", "");
    LockStore locks = backend.locks();
    String name = "no-node";
    AcquireResult a = get(locks.tryAcquire(request(name, "a")));

    HandOverResult handedOver =
        get(locks.releaseAndHandOver(grant(name, "a", a), LockMode.EXCLUSIVE, request(name, "d")));
    assertThat(handedOver.released()).isEqualTo(ReleaseResult.released(0));
    AcquireResult d = Objects.requireNonNull(handedOver.next(), "D's attempt was not made");
    assertThat(d.isGranted()).isTrue();
    assertThat(d.fencingToken()).isGreaterThan(a.fencingToken());
    assertHeldBy(backend, name, "d", 0);
    assertThat(get(backend.admin().inspect(name)).orElseThrow().holders())
        .singleElement()
        .satisfies(holder -> assertThat(holder.fencingToken()).isEqualTo(d.fencingToken()));

    // D holds on its node: its re-entry keeps the token, its release frees the lock.
    AcquireResult again = get(locks.tryAcquire(request(name, "d")));
    assertThat(again.fencingToken()).isEqualTo(d.fencingToken());
    assertThat(get(locks.release(grant(name, "d", d), LockMode.EXCLUSIVE)).remainingHolds())
        .isEqualTo(1);
    assertThat(get(locks.release(grant(name, "d", d), LockMode.EXCLUSIVE)).remainingHolds())
        .isZero();
    assertThat(get(backend.admin().inspect(name))).isEmpty();
  }

  /**
   * A holds; R, of another client, queues. A's release with the attempt of B (no node) does not
   * grant B: R was first. R gets the lock; B's node waits behind it as a queued waiter's does, and
   * takes the lock after R. A queued B behind R is not attempted at all.
   */
  @Test
  void aWaiterOfAnotherClientQueuedAheadKeepsItsTurn() throws Exception {
    LatchkeyBackend mine = open("remote-head", "");
    LatchkeyBackend other = open("remote-head", "", "other");
    String name = "remote-head";
    for (boolean bQueued : new boolean[] {false, true}) {
      AcquireResult a = get(mine.locks().tryAcquire(request(name, "a")));
      assertThat(a.isGranted()).isTrue();
      LockRequest remote =
          new LockRequest(name, "other:r", LockMode.EXCLUSIVE, 30_000, true, 30_000);
      assertThat(get(other.locks().tryAcquire(remote)).isGranted()).isFalse();
      if (bQueued) {
        assertThat(get(mine.locks().tryAcquire(request(name, "b"))).isGranted()).isFalse();
      }

      HandOverResult handedOver =
          get(
              mine.locks()
                  .releaseAndHandOver(grant(name, "a", a), LockMode.EXCLUSIVE, request(name, "b")));
      assertThat(handedOver.released()).isEqualTo(ReleaseResult.released(0));
      if (bQueued) {
        assertThat(handedOver.next()).as("a queued B behind R is not attempted").isNull();
      } else {
        AcquireResult b = Objects.requireNonNull(handedOver.next(), "B's attempt was not made");
        assertThat(b.isGranted()).isFalse();
      }
      // Nobody holds the lock: it is R's turn, which R has not taken yet.
      assertThat(get(mine.admin().inspect(name))).isEmpty();

      AcquireResult r = get(other.locks().tryAcquire(remote));
      assertThat(r.isGranted()).isTrue();
      assertThat(r.fencingToken()).isGreaterThan(a.fencingToken());
      assertThat(get(mine.admin().inspect(name)).orElseThrow().queuedWaiters()).isEqualTo(1);
      assertThat(get(mine.locks().tryAcquire(request(name, "b"))).isGranted()).isFalse();
      assertThat(
              get(other
                      .locks()
                      .release(
                          new GrantRef(
                              new HolderRef(ResourceType.LOCK, name, remote.owner()),
                              r.fencingToken()),
                          LockMode.EXCLUSIVE))
                  .wasHeld())
          .isTrue();
      AcquireResult b = get(mine.locks().tryAcquire(request(name, "b")));
      assertThat(b.isGranted()).isTrue();
      assertThat(b.fencingToken()).isGreaterThan(r.fencingToken());
      assertHeldBy(mine, name, "b", 0);
      assertThat(get(mine.locks().release(grant(name, "b", b), LockMode.EXCLUSIVE)).wasHeld())
          .isTrue();
    }
  }

  /**
   * A quorum raises the lock's fence (ADR 0009) while A holds and B waits: the handed-over grant's
   * token is above the raised value. A queued B is not handed the lock (the directory changed since
   * B's listing, so the release's multi-op is refused and a plain release follows) and takes it by
   * its own attempt; a B with no node is created with the fence this client last saw, below the
   * raise, and raised by the listing after the multi-op.
   */
  @Test
  void aHandedOverGrantIsAboveAFenceRaisedMeanwhile() throws Exception {
    LatchkeyBackend backend = open("fenced", "");
    FenceStore fences = open("fenced", "", "raiser").fences().orElseThrow();
    LockStore locks = backend.locks();
    String name = "fenced";
    for (boolean queued : new boolean[] {true, false}) {
      AcquireResult a = get(locks.tryAcquire(request(name, "a")));
      assertThat(a.isGranted()).isTrue();
      if (queued) {
        assertThat(get(locks.tryAcquire(request(name, "b"))).isGranted()).isFalse();
      }
      long raised = a.fencingToken() + 1_000_000;
      assertThat(get(fences.raiseLockFence(name, raised))).isEqualTo(raised);

      HandOverResult handedOver =
          get(
              locks.releaseAndHandOver(
                  grant(name, "a", a), LockMode.EXCLUSIVE, request(name, "b")));
      assertThat(handedOver.released()).isEqualTo(ReleaseResult.released(0));
      if (queued) {
        assertThat(handedOver.next()).as("B's listing is older than the raise").isNull();
      }
      AcquireResult b =
          queued
              ? get(locks.tryAcquire(request(name, "b")))
              : Objects.requireNonNull(handedOver.next(), "B's attempt was not made");
      assertThat(b.isGranted()).isTrue();
      assertThat(b.fencingToken()).isGreaterThan(raised);
      assertThat(get(locks.release(grant(name, "b", b), LockMode.EXCLUSIVE)).wasHeld()).isTrue();
    }
  }

  /**
   * Through the engine: an owner that waits behind its own client's holder has no node; another
   * client queues meanwhile. The holder's release creates the local waiter's node in its multi-op,
   * behind the other client's, so that client is granted first, and the local waiter, now queued,
   * gets the lock when that client releases, with a larger token each time.
   */
  @Test
  void aLocalWaiterGivenANodeBehindAnotherClientsWaiterComesAfterIt() throws Exception {
    String uri = ZooKeeperTestServers.uri(server.getConnectString(), "local-behind");
    String name = "local-behind";
    try (Latchkey mine = Latchkey.connect(uri);
        Latchkey theirs = Latchkey.connect(uri)) {
      Lease first = mine.lock(name).withOwner(OwnerToken.random()).acquire(Duration.ZERO);
      CompletableFuture<Lease> second = waiting(mine, name);
      first.release(); // handed over: from now on the client knows which grant holds the lock
      Lease holder = second.get(30, TimeUnit.SECONDS);

      CompletableFuture<Lease> local = waiting(mine, name);
      assertThat(theirs.admin().inspect(name).orElseThrow().queuedWaiters())
          .as("the local waiter has no node")
          .isZero();
      CompletableFuture<Lease> other =
          theirs.lock(name).acquireAsync(Duration.ofMinutes(1)).toCompletableFuture();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> theirs.admin().inspect(name).orElseThrow().queuedWaiters() == 1);

      holder.release();

      Lease theirsHeld = other.get(30, TimeUnit.SECONDS);
      assertThat(theirsHeld.fencingToken()).isGreaterThan(holder.fencingToken());
      assertThat(local).isNotDone();
      assertThat(theirs.admin().inspect(name).orElseThrow().queuedWaiters()).isEqualTo(1);
      theirsHeld.release();
      Lease localHeld = local.get(30, TimeUnit.SECONDS);
      assertThat(localHeld.fencingToken()).isGreaterThan(theirsHeld.fencingToken());
      localHeld.release();
    }
  }

  private static CompletableFuture<Lease> waiting(Latchkey client, String name) {
    return client
        .lock(name)
        .withOwner(OwnerToken.random())
        .acquireAsync(Duration.ofMinutes(1))
        .toCompletableFuture();
  }

  /**
   * Eight threads of one client on one lock, counted by the server ({@code srvr}'s received
   * packets). With plain releases a contended cycle costs six requests (the waiter's create,
   * listing and watch; its listing and claim once woken; its delete): 6.1 measured. With hand-overs
   * the head's claim goes with its predecessor's delete: four (4.1; 5.1 when a listing followed the
   * multi-op). With threads that wait behind their own client's holder without asking, a cycle is
   * the multi-op that deletes the holder's node and creates the next thread's, and one listing: two
   * (2.2 measured; Curator's mutex sends five).
   */
  @Test
  void contendedCyclesTakeFewerRequests() throws Exception {
    try (Latchkey client =
        Latchkey.connect(
            ZooKeeperTestServers.uri(server.getConnectString(), "counted"),
            ContendedCycles.COUNTING_OPTIONS)) {
      DistributedLock lock = client.lock("contended");
      lock.lock();
      lock.unlock();
      long before = received();
      ContendedCycles.run(List.of(lock), THREADS, CYCLES_PER_THREAD, Duration.ofMinutes(2));
      // srvr is no request; the sessions' pings are counted (a few, next to 1,000 requests).
      double perCycle = (received() - before) / (double) (THREADS * CYCLES_PER_THREAD);
      System.out.printf("%.2f requests per contended cycle%n", perCycle);
      assertThat(perCycle).as("requests per cycle").isLessThanOrEqualTo(3.0);
    }
  }

  private static long received() throws IOException {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.getPort())) {
      socket.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().flush();
      String reply = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
      for (String line : reply.split("\n", -1)) {
        if (line.startsWith("Received:")) {
          return Long.parseLong(line.substring("Received:".length()).trim());
        }
      }
      throw new IllegalStateException("no Received: line in srvr's reply: " + reply);
    }
  }

  private static void assertHeldBy(
      LatchkeyBackend backend, String name, String owner, int queuedWaiters) throws Exception {
    LockInfo held = get(backend.admin().inspect(name)).orElseThrow();
    assertThat(held.holders())
        .singleElement()
        .satisfies(holder -> assertThat(holder.owner()).isEqualTo(CLIENT + ":" + owner));
    assertThat(held.queuedWaiters()).isEqualTo(queuedWaiters);
  }

  /** An owner of this client's threads: one that no other process can act for. */
  private static LockRequest request(String name, String owner) {
    return new LockRequest(name, CLIENT + ":" + owner, LockMode.EXCLUSIVE, 30_000, true, 30_000);
  }

  private static GrantRef grant(String name, String owner, AcquireResult granted) {
    return new GrantRef(
        new HolderRef(ResourceType.LOCK, name, CLIENT + ":" + owner), granted.fencingToken());
  }

  private LatchkeyBackend open(String namespace, String query) {
    return open(namespace, query, CLIENT);
  }

  private LatchkeyBackend open(String namespace, String query, String clientId) {
    String uri = "zookeeper://" + server.getConnectString() + "/" + namespace + query;
    LatchkeyBackend backend =
        ZooKeeperBackend.open(
            URI.create(uri),
            new BackendContext(clientId, Duration.ofSeconds(10), Duration.ofSeconds(30)));
    backends.add(backend);
    return backend;
  }

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }
}
