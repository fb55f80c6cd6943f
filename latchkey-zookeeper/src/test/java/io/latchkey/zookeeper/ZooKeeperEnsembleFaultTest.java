package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.BackendUnavailableException;
import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.testkit.LeaseTransitions;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Faults of a three-server ensemble under held and awaited locks: the leader dies, the server a
 * holder is connected to dies, a follower dies, the quorum is lost, a holder's session expires.
 * Each test has an ensemble of its own (in-process servers on free ports, started by the test).
 *
 * <p>What must hold: a fail-over that the sessions survive loses no lease and the fencing tokens
 * keep growing across it; an ensemble without a quorum suspends every lease at once (not valid, not
 * yet lost), reports them lost once the session can no longer be alive, and fails new calls within
 * the operation timeout; an expired session is reported as lost and the next waiter is granted.
 */
class ZooKeeperEnsembleFaultTest {
  private static final String SESSION_TIMEOUT = "8s";
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(2);

  private @Nullable TestingCluster ensemble;
  private final List<Latchkey> clients = new ArrayList<>();
  private final List<CuratorFramework> curators = new ArrayList<>();

  @BeforeEach
  void startEnsemble() throws Exception {
    ensemble = ZooKeeperTestEnsembles.start();
  }

  @AfterEach
  void stopEverything() throws IOException {
    clients.forEach(Latchkey::close);
    curators.forEach(CuratorFramework::close);
    if (ensemble != null) {
      ensemble.close();
    }
  }

  @Test
  void theLeaderDiesWhileLocksAreHeldAndWaitedFor() throws Exception {
    Latchkey holder = connect();
    Latchkey waiter = connect();
    String name = "fail-over";
    Lease held = holder.lock(name).acquire(Duration.ofSeconds(10));
    List<String> heard = LeaseTransitions.of(held);
    CompletableFuture<Lease> waiting =
        waiter.lock(name).acquireAsync(Duration.ofSeconds(60)).toCompletableFuture();

    InstanceSpec oldLeader = leader().orElseThrow();
    assertThat(ensemble().killServer(oldLeader)).isTrue();
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> leader().filter(spec -> !spec.equals(oldLeader)).isPresent());

    // The sessions survive the election: the holder's lease comes back valid, never lost.
    await().atMost(Duration.ofSeconds(30)).until(held::isValid);
    assertThat(heard).doesNotContain("lost");
    assertThat(waiting.isDone() && !waiting.isCompletedExceptionally())
        .as("the waiter was granted while the lock was held")
        .isFalse();
    held.release();

    // The waiter waited through the fail-over (its attempts answered busy while its connection was
    // down) and is granted now, never while the lock was held.
    Lease next = waiting.get(30, TimeUnit.SECONDS);
    assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
    next.release();
    try (Lease after = holder.lock(name).acquire(Duration.ofSeconds(10))) {
      assertThat(after.fencingToken()).isGreaterThan(next.fencingToken());
    }
  }

  @Test
  void theServerOfAHoldersConnectionDiesAndTheLeaseIsSuspendedThenResumed() throws Exception {
    CuratorFramework curator = curator();
    Latchkey holder =
        Latchkey.using(ZooKeeperBackend.builder(curator).namespace("moved").build(), options());
    clients.add(holder);
    Lease held = holder.lock("moved").acquire(Duration.ofSeconds(10));
    List<String> heard = LeaseTransitions.of(held);

    InstanceSpec connectedTo =
        ensemble().findConnectionInstance(curator.getZookeeperClient().getZooKeeper());
    assertThat(ensemble().killServer(connectedTo)).isTrue();

    // The client moves to another server within the session: in doubt meanwhile, never lost.
    await().atMost(Duration.ofSeconds(30)).until(() -> heard.contains("resumed"));
    assertThat(heard).containsSubsequence("suspended", "resumed").doesNotContain("lost");
    assertThat(held.isValid()).isTrue();
    held.release();
  }

  @Test
  void aFollowerDiesAndLocksGoOn() throws Exception {
    Latchkey client = connect();
    DistributedLock lock = client.lock("follower");
    Lease held = lock.acquire(Duration.ofSeconds(10));
    List<String> heard = LeaseTransitions.of(held);
    InstanceSpec leader = leader().orElseThrow();
    InstanceSpec follower =
        ensemble().getInstances().stream()
            .filter(spec -> !spec.equals(leader))
            .findFirst()
            .orElseThrow();

    assertThat(ensemble().killServer(follower)).isTrue();

    await().atMost(Duration.ofSeconds(30)).until(held::isValid);
    held.release();
    assertThat(heard).doesNotContain("lost");
    long previous = held.fencingToken();
    for (int i = 0; i < 5; i++) {
      try (Lease lease = lock.acquire(Duration.ofSeconds(10))) {
        assertThat(lease.fencingToken()).isGreaterThan(previous);
        previous = lease.fencingToken();
      }
    }
  }

  @Test
  void losingTheQuorumSuspendsThenLosesLeasesAndNewCallsFailWithinTheBound() throws Exception {
    Latchkey client = connect();
    Lease held = client.lock("quorum").acquire(Duration.ofSeconds(10));
    List<String> heard = LeaseTransitions.of(held);
    List<LeaseLostException> lost = new CopyOnWriteArrayList<>();
    held.onLost(lost::add);

    List<InstanceSpec> instances = new ArrayList<>(ensemble().getInstances());
    assertThat(ensemble().killServer(instances.get(0))).isTrue();
    assertThat(ensemble().killServer(instances.get(1))).isTrue();

    // Suspended first: not valid, not lost; then lost once the session cannot be alive any more.
    await().atMost(Duration.ofSeconds(30)).until(() -> !held.isValid());
    await().atMost(Duration.ofSeconds(60)).until(() -> !lost.isEmpty());
    assertThat(heard).containsSubsequence("suspended", "lost");

    // A new call fails within the operation timeout (plus a loaded machine's slack).
    long started = System.nanoTime();
    assertThatThrownBy(() -> client.lock("other").acquire(Duration.ZERO))
        .isInstanceOf(BackendUnavailableException.class);
    assertThat(Duration.ofNanos(System.nanoTime() - started))
        .isLessThan(OPERATION_TIMEOUT.plusSeconds(3));
    assertThatThrownBy(held::release).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void anExpiredSessionIsReportedLostAndTheNextWaiterIsGranted() throws Exception {
    CuratorFramework curator = curator();
    Latchkey holder =
        Latchkey.using(ZooKeeperBackend.builder(curator).namespace("expiry").build(), options());
    clients.add(holder);
    Latchkey waiter =
        Latchkey.connect(
            ZooKeeperTestServers.uri(ensemble().getConnectString(), "expiry"), options());
    clients.add(waiter);

    String name = "expiry";
    Lease held = holder.lock(name).acquire(Duration.ofSeconds(10));
    List<LeaseLostException> lost = new CopyOnWriteArrayList<>();
    held.onLost(lost::add);
    CompletableFuture<Lease> waiting =
        waiter.lock(name).acquireAsync(Duration.ofSeconds(60)).toCompletableFuture();

    curator.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();

    await().atMost(Duration.ofSeconds(30)).until(() -> !lost.isEmpty());
    assertThat(held.isValid()).isFalse();
    assertThatThrownBy(held::release).isInstanceOf(LeaseLostException.class);
    Lease next = waiting.get(30, TimeUnit.SECONDS);
    assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
    next.release();
  }

  private Latchkey connect() {
    Latchkey client =
        Latchkey.connect(
            "zookeeper://"
                + ensemble().getConnectString()
                + "/faults?sessionTimeout="
                + SESSION_TIMEOUT,
            options());
    clients.add(client);
    return client;
  }

  /** A Curator client of the test's own, whose ZooKeeper handle the test can reach. */
  private CuratorFramework curator() throws InterruptedException {
    CuratorFramework curator =
        CuratorFrameworkFactory.builder()
            .connectString(ensemble().getConnectString())
            .sessionTimeoutMs(8_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .build();
    curators.add(curator);
    curator.start();
    assertThat(curator.blockUntilConnected(30, TimeUnit.SECONDS)).isTrue();
    return curator;
  }

  private static LatchkeyOptions options() {
    return LatchkeyOptions.builder()
        .operationTimeout(OPERATION_TIMEOUT)
        .closeOnShutdown(false)
        .build();
  }

  private TestingCluster ensemble() {
    if (ensemble == null) {
      throw new IllegalStateException("the ensemble has not been started");
    }
    return ensemble;
  }

  private Optional<InstanceSpec> leader() {
    return ZooKeeperTestEnsembles.leader(ensemble());
  }
}
