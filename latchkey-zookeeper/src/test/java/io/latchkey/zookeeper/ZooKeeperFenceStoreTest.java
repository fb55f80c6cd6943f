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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
   * An uncontended acquire and release costs its three requests (a create, a listing, a delete)
   * whether the lock was raised or not: the record is read in the listing, and a client that knows
   * it creates its nodes with its offset. Counted as the background operations Curator sends.
   */
  @Test
  void anUncontendedCycleCostsThreeRequestsRaisedOrNot() throws Exception {
    AtomicInteger requests = new AtomicInteger();
    CuratorFramework curator =
        CuratorFrameworkFactory.builder()
            .connectString(server.getConnectString())
            .sessionTimeoutMs(3_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .build();
    curator
        .getZookeeperClient()
        .setTracerDriver(
            new TracerDriver() {
              @Override
              public void addTrace(String name, long time, TimeUnit unit) {
                if (name.endsWith("-Background")) {
                  requests.incrementAndGet();
                }
              }

              @Override
              public void addCount(String name, int increment) {}
            });
    curator.start();
    opened.add(curator);
    Latchkey client =
        closeAfter(
            Latchkey.using(
                ZooKeeperBackend.builder(curator).namespace(NAMESPACE).build(),
                LatchkeyOptions.builder().closeOnShutdown(false).build()));
    DistributedLock lock = client.lock("counted");
    acquireAndRelease(client, "counted");

    assertThat(fewestRequests(lock, requests)).as("never raised").isEqualTo(3.0);
    raise(fences(), "counted", AHEAD);
    // The first cycle learns the record (and writes the offset into its node once).
    acquireAndRelease(client, "counted");
    assertThat(fewestRequests(lock, requests)).as("raised").isEqualTo(3.0);
  }

  /**
   * Requests per cycle over 20 cycles, the fewest of three runs: a client's own periodic calls
   * (presence) may fall into a run.
   */
  private static double fewestRequests(DistributedLock lock, AtomicInteger requests)
      throws InterruptedException {
    double fewest = Double.MAX_VALUE;
    for (int run = 0; run < 3; run++) {
      int before = requests.get();
      for (int i = 0; i < 20; i++) {
        lock.acquire(WAIT).release();
      }
      fewest = Math.min(fewest, (requests.get() - before) / 20.0);
    }
    return fewest;
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
