package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LeasedSemaphore;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.testkit.process.WorkerJvm;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.EphemeralType;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Explicit permit leases as TTL nodes, on a real server that takes them (the build turns them on
 * for the test JVM and has the server reap every 250 ms), and the refusal on a server that does not
 * (in a JVM of its own). A TTL node is deleted by the server, not by its client: these tests let
 * permits run out with nobody releasing them and check that the next holder gets them.
 */
class ZooKeeperTtlLeaseTest {
  private static final String NAMESPACE = "ttl";
  private static final Duration LONG_LEASE = Duration.ofSeconds(30);
  private static final Duration PATIENCE = Duration.ofSeconds(30);

  private static @Nullable TestingServer server;
  private static @Nullable CuratorFramework inspector;

  private final Deque<AutoCloseable> opened = new ArrayDeque<>();
  private final ExecutorService executor = Executors.newCachedThreadPool();

  @BeforeAll
  static void startZooKeeper() throws InterruptedException {
    assertThat(ZooKeeperTestServers.ttlNodes())
        .as("the build runs the tests with zookeeper.extendedTypesEnabled=true")
        .isTrue();
    server = ZooKeeperTestServers.start();
    inspector =
        CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryNTimes(3, 200));
    inspector.start();
    assertThat(inspector.blockUntilConnected(30, TimeUnit.SECONDS)).isTrue();
  }

  @AfterAll
  static void stopZooKeeper() throws Exception {
    if (inspector != null) {
      inspector.close();
    }
    if (server != null) {
      server.close();
    }
  }

  @AfterEach
  void closeWhatTheTestOpened() throws Exception {
    executor.shutdownNow();
    while (!opened.isEmpty()) {
      opened.pop().close();
    }
  }

  private static TestingServer server() {
    if (server == null) {
      throw new IllegalStateException("the ZooKeeper server has not been started");
    }
    return server;
  }

  private static CuratorFramework inspector() {
    if (inspector == null) {
      throw new IllegalStateException("the inspecting client has not been started");
    }
    return inspector;
  }

  private static String uri() {
    return ZooKeeperTestServers.uri(server().getConnectString(), NAMESPACE);
  }

  private Latchkey client(String uri) {
    Latchkey latchkey = Latchkey.connect(uri);
    opened.push(latchkey);
    return latchkey;
  }

  private LatchkeyBackend backend(String uri) {
    LatchkeyBackend backend =
        ZooKeeperBackend.open(
            URI.create(uri),
            new BackendContext(
                "ttl-test-" + UUID.randomUUID(), Duration.ofSeconds(5), Duration.ofSeconds(5)));
    opened.push(backend);
    return backend;
  }

  private static String uniqueName(String prefix) {
    return prefix + "-" + UUID.randomUUID();
  }

  /** The permit's node as the server has it, or null. */
  private static @Nullable Stat permitNode(String name, String permitId) throws Exception {
    return inspector()
        .checkExists()
        .forPath("/" + NAMESPACE + ZooKeeperPaths.permit(name, permitId));
  }

  /** The permit's node as the server has it; fails if there is none. */
  private static Stat existingPermitNode(String name, String permitId) throws Exception {
    Stat stat = permitNode(name, permitId);
    if (stat == null) {
      throw new AssertionError("permit " + permitId + " of " + name + " has no node");
    }
    return stat;
  }

  @Test
  void theBackendDeclaresExplicitPermitLeasesAndItsProbeLeavesNothing() throws Exception {
    Latchkey latchkey = client(uri());

    assertThat(latchkey.features())
        .contains(Feature.PERMIT_LEASE_TIME)
        .as("locks stay session-bound")
        .doesNotContain(Feature.LEASE_TIME);
    assertThat(inspector().checkExists().forPath("/" + NAMESPACE + "/ttl-probe")).isNull();
    assertThatThrownBy(
            () -> latchkey.lock(uniqueName("ttl-lock")).acquire(Duration.ZERO, LONG_LEASE))
        .isInstanceOfSatisfying(
            UnsupportedFeatureException.class,
            e -> assertThat(e.feature()).isEqualTo(Feature.LEASE_TIME));
  }

  @Test
  void anExplicitLeaseIsATtlNodeAndAWatchdogPermitAnEphemeralOne() throws Exception {
    String name = uniqueName("ttl-kinds");
    Latchkey latchkey = client(uri());
    LeasedSemaphore semaphore = latchkey.leasedSemaphore(name);
    semaphore.trySetPermits(2);

    Lease leased = semaphore.tryAcquire(LONG_LEASE).orElseThrow();
    Lease watched = semaphore.acquire(Duration.ZERO);

    // The server shows clients no owner for a TTL node (its time to live is kept where an
    // ephemeral node's session is): it belongs to no session.
    Stat ttl = existingPermitNode(name, leased.holderId());
    assertThat(ttl.getEphemeralOwner()).as("the TTL node's owner").isZero();
    // So its data tells an operator whose it is and for how long.
    assertThat(
            NodeFields.decode(
                inspector()
                    .getData()
                    .forPath("/" + NAMESPACE + ZooKeeperPaths.permit(name, leased.holderId()))))
        .containsEntry("client", latchkey.clientId())
        .containsEntry("leaseMs", Long.toString(LONG_LEASE.toMillis()));
    assertThat(leased.fencingToken())
        .isEqualTo(ZooKeeperTestServers.fencingToken(inspector(), NAMESPACE, ttl));
    Stat ephemeral = existingPermitNode(name, watched.holderId());
    assertThat(EphemeralType.get(ephemeral.getEphemeralOwner())).isEqualTo(EphemeralType.NORMAL);

    leased.release();
    watched.release();
    assertThat(permitNode(name, leased.holderId())).isNull();
    assertThat(semaphore.availablePermits()).isEqualTo(2);
  }

  @Test
  void aPermitWhoseLeaseRunsOutIsReportedLostAndTheServerFreesIt() throws Exception {
    String name = uniqueName("ttl-expiry");
    LeasedSemaphore semaphore = client(uri()).leasedSemaphore(name);
    semaphore.trySetPermits(1);
    Lease expiring = semaphore.tryAcquire(Duration.ofMillis(700)).orElseThrow();
    CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    expiring.onLost(lost::complete);

    assertThat(lost).as("the loss listener").succeedsWithin(PATIENCE);
    assertThat(expiring.isValid()).isFalse();
    LeasedSemaphore other = client(uri()).leasedSemaphore(name);
    // Nobody releases it: the server deletes the node once its time to live has passed.
    await("the server deletes the permit's node")
        .atMost(PATIENCE)
        .until(() -> permitNode(name, expiring.holderId()) == null);
    assertThat(other.availablePermits()).isEqualTo(1);
    Lease next = other.tryAcquire(LONG_LEASE).orElseThrow();
    assertThat(next.fencingToken()).isGreaterThan(expiring.fencingToken());

    assertThatThrownBy(expiring::release).isInstanceOf(LeaseLostException.class);
    assertThat(other.availablePermits()).as("the lost permit's release freed nothing").isZero();
    next.release();
  }

  @Test
  void aPermitOfABackendClosedWithoutReleaseOutlivesItsSessionUntilTheServerDeletesIt()
      throws Exception {
    String name = uniqueName("ttl-closed");
    LatchkeyBackend crashing = backend(uri());
    assertThat(crashing.leasedSemaphores().trySetPermits(name, 1).toCompletableFuture().get())
        .isTrue();
    String permitId = "crashed-" + UUID.randomUUID();
    AcquireResult granted =
        crashing
            .leasedSemaphores()
            .tryAcquireWithLease(name, permitId, 3000)
            .toCompletableFuture()
            .get();
    assertThat(granted.isGranted()).isTrue();

    crashing.close(); // its session ends: its ephemeral nodes go, the TTL node stays
    assertThat(permitNode(name, permitId)).as("the permit outlives the session").isNotNull();
    LeasedSemaphore waiting = client(uri()).leasedSemaphore(name);
    assertThat(waiting.availablePermits()).isZero();
    Future<Lease> waiter = executor.submit(() -> waiting.acquire(PATIENCE));

    Lease taken = waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertThat(permitNode(name, permitId)).as("deleted by the server").isNull();
    assertThat(taken.fencingToken()).isGreaterThan(granted.fencingToken());
    taken.release();
  }

  @Test
  void aKilledHoldersPermitOutlivesItsSessionAndFreesAfterItsLease() throws Exception {
    String name = uniqueName("ttl-killed");
    try (WorkerJvm holder =
        WorkerJvm.start(TtlPermitHolder.class, List.of(uri(), name, "12000"), line -> {})) {
      String[] held = holder.awaitLine("HELD", Duration.ofSeconds(60)).split(" ", -1);
      String permitId = held[0];
      long token = Long.parseLong(held[1]);
      String holderClient = held[2];
      holder.kill();

      LeasedSemaphore waiting = client(uri()).leasedSemaphore(name);
      Future<Lease> waiter = executor.submit(() -> waiting.acquire(PATIENCE));
      // The killed client's session expires (its presence node goes with it), its permit stays.
      await("the killed holder's session ends")
          .atMost(PATIENCE)
          .until(
              () ->
                  inspector()
                          .checkExists()
                          .forPath("/" + NAMESPACE + ZooKeeperPaths.client(holderClient))
                      == null);
      // The lease (12 s from before HELD) outlasts the session (3 s after the kill) by far.
      assertThat(permitNode(name, permitId)).as("the permit after its session").isNotNull();
      assertThat(waiter).as("the waiter while the permit's lease lasts").isNotDone();

      Lease taken = waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(permitNode(name, permitId)).isNull();
      assertThat(taken.fencingToken()).isGreaterThan(token);
      taken.release();
    }
  }

  @Test
  void aServerWithoutTtlNodesRefusesExplicitPermitLeasesNamingTheSetting() throws Exception {
    try (ZooKeeperServerJvm plainServer = ZooKeeperServerJvm.withoutTtlNodes()) {
      String plainUri = ZooKeeperTestServers.uri(plainServer.connectString(), NAMESPACE);
      Latchkey latchkey = client(plainUri);
      String name = uniqueName("ttl-refused");
      LeasedSemaphore semaphore = latchkey.leasedSemaphore(name);
      semaphore.trySetPermits(1);

      assertThat(latchkey.features())
          .contains(Feature.LEASED_SEMAPHORE)
          .doesNotContain(Feature.PERMIT_LEASE_TIME);
      assertThatThrownBy(() -> semaphore.tryAcquire(LONG_LEASE))
          .isInstanceOfSatisfying(
              UnsupportedFeatureException.class,
              e -> assertThat(e.feature()).isEqualTo(Feature.PERMIT_LEASE_TIME))
          .hasMessageContaining(latchkey.backendDescription())
          .hasMessageContaining("PERMIT_LEASE_TIME")
          .hasMessageContaining("zookeeper.extendedTypesEnabled=true");
      assertThatThrownBy(() -> semaphore.acquire(Duration.ZERO, LONG_LEASE))
          .isInstanceOf(UnsupportedFeatureException.class);
      assertThat(semaphore.availablePermits()).as("nothing was taken").isEqualTo(1);
      Lease watched = semaphore.acquire(Duration.ZERO);
      assertThat(watched.isValid()).as("a watchdog permit still works").isTrue();
      watched.release();

      LatchkeyBackend backend = backend(plainUri);
      assertThat(backend.missingFeatureReason(Feature.PERMIT_LEASE_TIME)).isPresent();
      assertThat(
              backend
                  .leasedSemaphores()
                  .tryAcquireWithLease(name, "direct-" + UUID.randomUUID(), 5000)
                  .toCompletableFuture())
          .failsWithin(PATIENCE)
          .withThrowableThat()
          .havingCause()
          .isInstanceOf(UnsupportedFeatureException.class)
          .withMessageContaining("zookeeper.extendedTypesEnabled=true");
    }
  }
}
