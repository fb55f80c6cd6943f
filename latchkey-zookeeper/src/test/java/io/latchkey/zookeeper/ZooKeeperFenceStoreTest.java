package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LockInfo;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.FenceStore;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.testkit.EpochRecordChecks;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.drivers.TracerDriver;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
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
    return new BackendContext("fences", Duration.ofSeconds(10), Duration.ofSeconds(30));
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
