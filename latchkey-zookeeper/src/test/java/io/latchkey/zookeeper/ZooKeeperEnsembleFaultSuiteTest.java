package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.latchkey.testkit.faults.FaultKind;
import io.latchkey.testkit.faults.FaultMode;
import io.latchkey.testkit.faults.FaultReport;
import io.latchkey.testkit.faults.FaultSuite;
import io.latchkey.testkit.faults.ServerControl;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fault suite on a three-server ZooKeeper ensemble (in-process, tick 400 ms), for the modes
 * ZooKeeper offers, with every worker fault and servers crashed and restarted on their data.
 * Reports go to {@code target/fault-reports/zookeeper-ensemble-MODE.txt}; {@link FaultSuite} lists
 * the properties. Run with {@code mvn -B -pl latchkey-zookeeper verify -Psoak
 * -Dtest=ZooKeeperEnsembleFaultSuiteTest -Dsurefire.failIfNoSpecifiedTests=false}.
 *
 * <p>Server crashes alternate: the first kills the leader, the second a follower, and so on (the
 * followers in turn, in the ensemble's order); a crashed server is restarted on its data and the
 * crash is over only once it serves again in an ensemble with one leader, so one server at most is
 * down at a time and the quorum stands.
 *
 * <p>The suite fronts one address with each worker's proxy, so the proxy fronts the first server
 * and the client URI lists the other two directly: a worker whose client is connected to the first
 * server has its connection frozen or cut by the connection faults; a worker connected to another
 * server is not touched by them (the client picks its server at random from the list).
 *
 * <p>Clients ask for 8 s sessions, so that a session outlives an election. A dead holder's node
 * then goes only when its session expires, 8 s after the holder was last heard of, not within the
 * suite's 2 s lease: for the lock and the watchdog's permits the suite's own liveness bound (lease
 * + renew interval) is not promised, and this test asserts the session timeout plus that bound
 * instead.
 *
 * <p>The servers take TTL nodes, so the leased semaphore's permits with an explicit lease are TTL
 * nodes, which belong to no session: the leader's container manager deletes a dead holder's permit
 * between its lease and its lease plus one check interval after its creation, whatever the session
 * timeout. For that mode the suite's own bound (lease + renew interval + that check interval, the
 * {@linkplain ServerControl#explicitPermitReapDelay() reap delay}) is asserted, as on one server.
 */
@Tag("slow")
class ZooKeeperEnsembleFaultSuiteTest {
  private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(8);

  @ParameterizedTest
  @EnumSource(
      value = FaultMode.class,
      names = {"WATCHDOG_LOCK", "FAIR_LOCK", "LEASED_SEMAPHORE", "EXPLICIT_LEASE_SEMAPHORE"})
  void everyFaultKind(FaultMode mode) throws Exception {
    assumeTrue(FaultSuite.selected(mode), mode + " is not in -D" + FaultSuite.MODES);
    boolean heldBySession = mode != FaultMode.EXPLICIT_LEASE_SEMAPHORE;
    try (TestingCluster ensemble = ZooKeeperTestEnsembles.start()) {
      EnsembleControl control = new EnsembleControl(ensemble);
      FaultReport report =
          FaultSuite.runAndCheck(
              mode,
              control,
              "zookeeper-ensemble-" + mode.name().toLowerCase(Locale.ROOT),
              !heldBySession);
      System.out.printf(
          "ensemble crashes: %d of the leader, %d of a follower%n",
          control.leaderCrashes, control.followerCrashes);
      if (heldBySession) {
        assertThat(report.longestFreeAfterDeathMillis())
            .as("free after a holder died, bound: session timeout + lease + renew interval")
            .isLessThanOrEqualTo(SESSION_TIMEOUT.toMillis() + report.livenessBoundMillis());
      }
    }
  }

  /** Kills and restarts servers of an in-process ensemble, the leader and a follower in turn. */
  private static final class EnsembleControl implements ServerControl {
    private final TestingCluster ensemble;
    private final InstanceSpec proxied;
    private final List<InstanceSpec> direct = new ArrayList<>();
    private @Nullable InstanceSpec crashed;
    private int crashes;
    int leaderCrashes;
    int followerCrashes;

    EnsembleControl(TestingCluster ensemble) {
      this.ensemble = ensemble;
      List<InstanceSpec> instances = new ArrayList<>(ensemble.getInstances());
      this.proxied = instances.get(0);
      this.direct.addAll(instances.subList(1, instances.size()));
    }

    @Override
    public String host() {
      return "127.0.0.1";
    }

    @Override
    public int port() {
      return proxied.getPort();
    }

    @Override
    public String uriVia(String host, int port) {
      StringBuilder hosts = new StringBuilder(host + ":" + port);
      direct.forEach(spec -> hosts.append(",127.0.0.1:").append(spec.getPort()));
      return "zookeeper://" + hosts + "/faults?sessionTimeout=" + SESSION_TIMEOUT.toSeconds() + "s";
    }

    @Override
    public Set<FaultKind> serverFaults() {
      return EnumSet.of(FaultKind.CRASH_SERVER);
    }

    @Override
    public void crash() {
      InstanceSpec leader =
          await()
              .atMost(Duration.ofSeconds(60))
              .until(() -> ZooKeeperTestEnsembles.leader(ensemble), found -> found.isPresent())
              .orElseThrow();
      InstanceSpec victim;
      if (crashes % 2 == 0) {
        victim = leader;
        leaderCrashes++;
      } else {
        List<InstanceSpec> followers = new ArrayList<>(ensemble.getInstances());
        followers.remove(leader);
        victim = followers.get((crashes / 2) % followers.size());
        followerCrashes++;
      }
      crashes++;
      try {
        assertThat(ensemble.killServer(victim)).as("killed " + victim).isTrue();
      } catch (Exception e) {
        throw new IllegalStateException("cannot kill " + victim, e);
      }
      crashed = victim;
    }

    @Override
    public void restart() {
      InstanceSpec victim = crashed;
      if (victim == null) {
        return;
      }
      try {
        assertThat(ensemble.restartServer(victim)).as("restarted " + victim).isTrue();
      } catch (Exception e) {
        throw new IllegalStateException("cannot restart " + victim, e);
      }
      crashed = null;
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  ZooKeeperTestEnsembles.mode(victim) != null
                      && ZooKeeperTestEnsembles.leader(ensemble).isPresent());
    }

    @Override
    public void pause(Duration duration) {
      throw new UnsupportedOperationException("in-process servers cannot be paused");
    }

    @Override
    public Duration explicitPermitReapDelay() {
      return ZooKeeperTestEnsembles.ttlCheckInterval();
    }
  }
}
