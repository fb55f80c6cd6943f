package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.BackendUnavailableException;
import io.latchkey.ClientInfo;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.servers.RedisClusterTestServer;
import io.latchkey.servers.RedisTestServer;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.ResourceType;
import io.lettuce.core.cluster.SlotHash;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the conformance kit cannot see on a Redis Cluster (three masters, started by the test):
 * records on every master, shard channels, one renewal call per slot, presence records everywhere,
 * seeds.
 */
class RedisClusterTest {
  private static final RedisKeys KEYS = new RedisKeys(RedisConnectionSettings.DEFAULT_PREFIX);

  private static @Nullable RedisClusterTestServer shared;

  private final List<AutoCloseable> opened = new ArrayList<>();

  @BeforeAll
  static void startCluster() {
    shared = RedisClusterTestServer.start();
  }

  @AfterAll
  static void stopCluster() {
    if (shared != null) {
      shared.close();
    }
  }

  @AfterEach
  void closeEverything() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
    opened.clear();
  }

  private static RedisClusterTestServer cluster() {
    if (shared == null) {
      throw new IllegalStateException("the cluster has not been started");
    }
    return shared;
  }

  private Latchkey connect(Duration recheck) {
    return connect(cluster(), recheck);
  }

  /**
   * A client whose waiters look again only every {@code recheck} unless woken (the long lease keeps
   * them from looking when a holder's lease would end).
   */
  private Latchkey connect(RedisClusterTestServer target, Duration recheck) {
    Latchkey client =
        Latchkey.connect(
            RedisClusterConformanceTest.clusterUri(target),
            LatchkeyOptions.builder()
                .leaseTime(Duration.ofMinutes(1))
                .operationTimeout(Duration.ofSeconds(2))
                .recheckInterval(recheck)
                .queueKeepAlive(recheck.multipliedBy(3))
                .closeOnShutdown(false)
                .build());
    opened.add(client);
    return client;
  }

  /** One lock name per master: names whose records land on each master of the cluster. */
  private static Map<RedisTestServer, String> oneNamePerMaster(String stem) {
    Map<RedisTestServer, String> names = new HashMap<>();
    for (int i = 0; names.size() < cluster().masters().size(); i++) {
      String name = stem + "/" + i;
      names.putIfAbsent(cluster().masterFor(KEYS.lock(name)), name);
    }
    return names;
  }

  /**
   * Waits until a waiter's subscription to a lock's channel is active: a shard subscription on
   * {@code master} (Redis 7 and later), else a classic one on any node.
   */
  private static void awaitSubscriber(
      RedisClusterTestServer target, RedisTestServer master, String channel) {
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                sharded(target)
                    ? subscribers(master, "SHARDNUMSUB", channel) == 1
                    : target.nodes().stream()
                            .mapToLong(node -> subscribers(node, "NUMSUB", channel))
                            .sum()
                        == 1);
  }

  private static boolean sharded(RedisClusterTestServer target) {
    return target.nodes().get(0).binary().isAtLeast(7, 0);
  }

  private static long subscribers(RedisTestServer node, String numsub, String channel) {
    return (Long)
        ((List<?>) Objects.requireNonNull(node.command("PUBSUB", numsub, channel))).get(1);
  }

  private static long scriptCalls(RedisTestServer node) {
    String entry = node.info("commandstats").get("cmdstat_evalsha");
    return entry == null
        ? 0
        : Long.parseLong(entry.substring("calls=".length(), entry.indexOf(',')));
  }

  @Test
  void locksOnEveryMasterAreHeldInspectedAndListed() throws InterruptedException {
    Latchkey holder = connect(Duration.ofSeconds(2));
    Latchkey other = connect(Duration.ofSeconds(2));
    Map<RedisTestServer, String> names = oneNamePerMaster("spread");

    List<Lease> leases = new ArrayList<>();
    for (Map.Entry<RedisTestServer, String> entry : names.entrySet()) {
      leases.add(holder.lock(entry.getValue()).acquire(Duration.ZERO));
      assertThat((Long) entry.getKey().command("EXISTS", KEYS.lock(entry.getValue()))).isOne();
      assertThat(other.lock(entry.getValue()).tryLock()).isFalse();
    }

    assertThat(other.admin().list()).extracting(LockInfo::name).containsAll(names.values());
    for (String name : names.values()) {
      assertThat(other.admin().inspect(name)).map(LockInfo::name).contains(name);
    }
    for (Lease lease : leases) {
      lease.release();
    }
    assertThat(other.admin().list())
        .extracting(LockInfo::name)
        .doesNotContainAnyElementsOf(names.values());
  }

  @Test
  void wakeUpsTravelOnTheShardChannelOfTheLock() throws Exception {
    String name = "sharded/" + System.nanoTime();
    String channel = KEYS.wakeups(ResourceType.LOCK, name);
    RedisTestServer master = cluster().masterFor(channel);
    Latchkey holder = connect(Duration.ofSeconds(2));
    Latchkey waiter = connect(Duration.ofSeconds(30));
    Lease held = holder.lock(name).acquire(Duration.ZERO);

    CompletableFuture<Lease> waiting =
        waiter.lock(name).acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    awaitSubscriber(cluster(), master, channel);
    if (sharded(cluster())) {
      for (RedisTestServer node : cluster().nodes()) {
        assertThat(subscribers(node, "NUMSUB", channel))
            .as("classic subscribers on %s", node)
            .isZero();
      }
    }
    held.release();

    // The re-check is 30 s away: only the wake-up can grant this in time.
    Lease granted = waiting.get(5, TimeUnit.SECONDS);
    assertThat(granted.isValid()).isTrue();
    granted.release();
  }

  @Test
  void renewalSendsOneScriptCallPerHashSlot() throws Exception {
    RedisBackend backend =
        RedisBackend.open(
            URI.create(RedisClusterConformanceTest.clusterUri(cluster())),
            new BackendContext("renewer", Duration.ofSeconds(2), Duration.ofMinutes(1)));
    opened.add(backend);
    List<GrantRef> holders = new ArrayList<>();
    Set<Integer> slots = new HashSet<>();
    for (int i = 0; i < 30; i++) {
      // Three owners per name: ten names, up to ten slots.
      String name = "renewed/" + (i % 10);
      String owner = "owner-" + i;
      AcquireResult granted =
          backend
              .locks()
              .tryAcquire(new LockRequest(name, owner, LockMode.SHARED, 60_000, false, 0))
              .toCompletableFuture()
              .get();
      assertThat(granted.status()).isEqualTo(AcquireResult.Status.GRANTED);
      holders.add(
          new GrantRef(new HolderRef(ResourceType.LOCK, name, owner), granted.fencingToken()));
      slots.add(SlotHash.getSlot(KEYS.lock(name)));
    }
    holders.add(new GrantRef(new HolderRef(ResourceType.LOCK, "renewed/never-held", "nobody"), 1));
    slots.add(SlotHash.getSlot(KEYS.lock("renewed/never-held")));
    for (RedisTestServer master : cluster().masters()) {
      master.command("CONFIG", "RESETSTAT");
    }

    Set<GrantRef> gone = backend.renew(holders, 120_000).toCompletableFuture().get().gone();

    assertThat(gone).containsExactly(holders.get(holders.size() - 1));
    assertThat(cluster().masters().stream().mapToLong(RedisClusterTest::scriptCalls).sum())
        .isEqualTo(slots.size());
  }

  @Test
  void presenceRecordsOfEveryMasterAreListed() {
    Latchkey monitor = connect(Duration.ofSeconds(2));
    Set<String> clientIds = new HashSet<>();
    Set<RedisTestServer> masters = new HashSet<>();
    while (masters.size() < cluster().masters().size()) {
      Latchkey client = connect(Duration.ofSeconds(2));
      clientIds.add(client.clientId());
      masters.add(cluster().masterFor(KEYS.presence(client.clientId())));
    }

    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () ->
                assertThat(monitor.admin().clients())
                    .extracting(ClientInfo::clientId)
                    .containsAll(clientIds));
  }

  @Test
  void anyLiveSeedFindsTheCluster() throws InterruptedException {
    RedisTestServer gone = RedisTestServer.start();
    String deadSeed = gone.hostAndPort();
    gone.close();
    String uri =
        "redis-cluster://"
            + deadSeed
            + ","
            + cluster().masters().get(1).hostAndPort()
            + "?prefix=seeds:";

    try (Latchkey client =
        Latchkey.connect(uri, LatchkeyOptions.builder().closeOnShutdown(false).build())) {
      assertThat(client.backendDescription()).isEqualTo(uri);
      for (String name : oneNamePerMaster("seeds").values()) {
        try (Lease lease = client.lock(name).acquire(Duration.ZERO)) {
          assertThat(lease.isValid()).isTrue();
        }
      }
    }
  }

  @Test
  void waitingForReplicasAsksTheMasterThatGranted() throws InterruptedException {
    // No master of this cluster has a replica: each grant must fail, on whichever master it is.
    try (Latchkey client =
        Latchkey.connect(
            RedisClusterConformanceTest.clusterUri(cluster()) + "?waitReplicas=1&waitTimeout=50ms",
            LatchkeyOptions.builder().closeOnShutdown(false).build())) {
      for (String name : oneNamePerMaster("waited").values()) {
        assertThatThrownBy(() -> client.lock(name).acquire(Duration.ZERO))
            .isInstanceOf(BackendUnavailableException.class)
            .hasMessageContaining("only 0 of the 1 replicas required");
        assertThat(client.admin().inspect(name)).isEmpty();
      }
    }
  }

  @Test
  void wakeUpsFollowTheirSlotThroughAFailOver() throws Exception {
    RedisClusterTestServer replicated =
        RedisClusterTestServer.builder().replicasPerMaster(1).start();
    opened.add(replicated);
    String name = "failed-over/" + System.nanoTime();
    String channel = KEYS.wakeups(ResourceType.LOCK, name);
    RedisTestServer master = replicated.masterFor(channel);
    RedisTestServer replica = replicated.replicas().get(replicated.masters().indexOf(master));
    Latchkey holder = connect(replicated, Duration.ofSeconds(2));
    Latchkey waiter = connect(replicated, Duration.ofSeconds(30));
    Lease held = holder.lock(name).acquire(Duration.ZERO);
    CompletableFuture<Lease> waiting =
        waiter.lock(name).acquireAsync(Duration.ofSeconds(40)).toCompletableFuture();
    awaitSubscriber(replicated, master, channel);

    replica.command("CLUSTER", "FAILOVER");
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> "master".equals(replica.info("replication").get("role")));
    replicated.awaitHealthy(Duration.ofSeconds(15));
    held.release();

    // The waiter's re-check is 30 s away: only a wake-up can grant this. Its shard subscription
    // stayed on the demoted master, which now receives the new master's SPUBLISH by replication.
    Lease granted = waiting.get(5, TimeUnit.SECONDS);
    assertThat(granted.isValid()).isTrue();
    granted.release();
  }

  @Test
  void wakeUpsFollowTheirSlotToAnotherMaster() throws Exception {
    String name = "migrated/" + System.nanoTime();
    String channel = KEYS.wakeups(ResourceType.LOCK, name);
    RedisTestServer source = cluster().masterFor(channel);
    RedisTestServer target =
        cluster().masters().stream().filter(node -> node != source).findFirst().orElseThrow();
    Latchkey holder = connect(Duration.ofSeconds(2));
    Latchkey waiter = connect(Duration.ofSeconds(30));
    Lease held = holder.lock(name).acquire(Duration.ZERO);
    CompletableFuture<Lease> waiting =
        waiter.lock(name).acquireAsync(Duration.ofSeconds(40)).toCompletableFuture();
    awaitSubscriber(cluster(), source, channel);

    migrate(SlotHash.getSlot(channel), source, target);
    awaitSubscriber(cluster(), target, channel);
    held.release();

    // The waiter's re-check is 30 s away: only a wake-up can grant this; on Redis 7, only one on
    // the shard channel, which the waiter subscribed to again on the slot's new master.
    Lease granted = waiting.get(5, TimeUnit.SECONDS);
    assertThat(granted.isValid()).isTrue();
    granted.release();
  }

  /** Moves a hash slot and its keys from one master to another, as a resharding does. */
  private static void migrate(int slot, RedisTestServer source, RedisTestServer target) {
    String slotText = Integer.toString(slot);
    String sourceId = String.valueOf(source.command("CLUSTER", "MYID"));
    String targetId = String.valueOf(target.command("CLUSTER", "MYID"));
    target.command("CLUSTER", "SETSLOT", slotText, "IMPORTING", sourceId);
    source.command("CLUSTER", "SETSLOT", slotText, "MIGRATING", targetId);
    List<?> keys =
        (List<?>)
            Objects.requireNonNull(source.command("CLUSTER", "GETKEYSINSLOT", slotText, "1000"));
    List<String> migrate =
        new ArrayList<>(
            List.of(
                "MIGRATE",
                target.host(),
                Integer.toString(target.port()),
                "",
                "0",
                "5000",
                "KEYS"));
    keys.forEach(key -> migrate.add(String.valueOf(key)));
    source.command(migrate.toArray(String[]::new));
    for (RedisTestServer master : cluster().masters()) {
      master.command("CLUSTER", "SETSLOT", slotText, "NODE", targetId);
    }
  }

  /**
   * Issue 8, item 8: renewal per slot. While one master stalls, only the grants in its slots go
   * (lost at their deadline); grants on the healthy masters stay valid, and a grant that a healthy
   * master no longer has is reported lost at once, not after the stalled master's call.
   */
  @Test
  void aStalledMasterLosesOnlyTheGrantsInItsSlots() throws Exception {
    Latchkey client =
        Latchkey.connect(
            RedisClusterConformanceTest.clusterUri(cluster()),
            LatchkeyOptions.builder()
                .leaseTime(Duration.ofMillis(1500))
                .renewInterval(Duration.ofMillis(300))
                .operationTimeout(Duration.ofSeconds(4))
                .closeOnShutdown(false)
                .build());
    opened.add(client);
    Latchkey admin = connect(Duration.ofSeconds(1));
    List<Map.Entry<RedisTestServer, String>> names =
        new ArrayList<>(oneNamePerMaster("stalled-" + System.nanoTime()).entrySet());
    RedisTestServer stalled = names.get(0).getKey();
    Lease stalledLease = client.lock(names.get(0).getValue()).acquire(Duration.ZERO);
    Lease forcedLease = client.lock(names.get(1).getValue()).acquire(Duration.ZERO);
    Lease healthyLease = client.lock(names.get(2).getValue()).acquire(Duration.ZERO);
    List<LeaseLostException> stalledLosses = new CopyOnWriteArrayList<>();
    List<LeaseLostException> forcedLosses = new CopyOnWriteArrayList<>();
    List<LeaseLostException> healthyLosses = new CopyOnWriteArrayList<>();
    stalledLease.onLost(stalledLosses::add);
    forcedLease.onLost(forcedLosses::add);
    healthyLease.onLost(healthyLosses::add);

    stalled.command("CLIENT", "PAUSE", "9000", "WRITE");
    try {
      admin.admin().forceRelease(names.get(1).getValue());
      // The forced grant is gone on a healthy master: heard within a renewal or two, long before
      // the stalled master's call gives up (3 s) or the engine's bound (4 s).
      await().atMost(Duration.ofMillis(1500)).until(() -> !forcedLosses.isEmpty());
      // Heard from the healthy master's answer, not from the lease timer (whose 1.5 s lease would
      // also end within that wait).
      assertThat(forcedLosses)
          .singleElement()
          .satisfies(lost -> assertThat(lost).hasMessageContaining("no longer knows"));
      // The stalled master's grant is no longer valid at its deadline (in doubt while its renewal
      // is on its way), and lost when that renewal gives up; the healthy one stays valid.
      await().atMost(Duration.ofSeconds(3)).until(() -> !stalledLease.isValid());
      assertThat(healthyLease.isValid()).isTrue();
      await().atMost(Duration.ofSeconds(5)).until(() -> !stalledLosses.isEmpty());
      assertThat(healthyLease.isValid()).isTrue();
      assertThat(healthyLosses).isEmpty();
    } finally {
      stalled.command("CLIENT", "UNPAUSE");
    }
    healthyLease.release();
  }
}
