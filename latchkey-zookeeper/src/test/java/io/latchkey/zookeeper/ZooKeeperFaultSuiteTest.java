package io.latchkey.zookeeper;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.latchkey.testkit.faults.FaultKind;
import io.latchkey.testkit.faults.FaultMode;
import io.latchkey.testkit.faults.FaultSuite;
import io.latchkey.testkit.faults.ServerControl;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fault suite on one ZooKeeper server in a JVM of its own ({@link ZooKeeperServerJvm}), for the
 * modes ZooKeeper offers (the watchdog lock, the fair lock, the leased semaphore, and its permits
 * with an explicit lease as TTL nodes), with every worker fault (pauses, kills, frozen and cut
 * connections) and every server fault: the server killed with SIGKILL and restarted on its data,
 * and stopped with SIGSTOP for a while. Clients ask for a 2 s session, the suite's lease. {@link
 * FaultSuite} lists the properties (duration per mode, default 2 minutes; seed; modes; kinds).
 * Reports go to {@code target/fault-reports/zookeeper-MODE.txt}. Run with {@code mvn -B -pl
 * latchkey-zookeeper verify -Psoak -Dtest=ZooKeeperFaultSuiteTest
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 *
 * <p>A dead holder's node goes when its session expires (2 s, checked by the server every tick),
 * and a TTL permit when the server's container manager, every {@value #TTL_CHECK_MILLIS} ms, finds
 * its time to live passed: the liveness bound (lease + renew interval, plus that check interval for
 * TTL permits) is asserted as for the lease backends. A server paused for longer than a session
 * (the suite pauses it for up to 1.5 leases, 3 s) may expire every session when it resumes: its
 * clients' ephemeral nodes go, and their holders are told they lost them.
 */
@Tag("slow")
class ZooKeeperFaultSuiteTest {
  /**
   * How often the server deletes the TTL nodes that ran out: short, as it adds to the time a dead
   * holder's permit stays taken (ZooKeeper's default is a minute).
   */
  private static final long TTL_CHECK_MILLIS = 250;

  @ParameterizedTest
  @EnumSource(
      value = FaultMode.class,
      names = {"WATCHDOG_LOCK", "FAIR_LOCK", "LEASED_SEMAPHORE", "EXPLICIT_LEASE_SEMAPHORE"})
  void everyFaultKind(FaultMode mode) throws Exception {
    assumeTrue(FaultSuite.selected(mode), mode + " is not in -D" + FaultSuite.MODES);
    try (ZooKeeperServerJvm server =
        ZooKeeperServerJvm.withTtlNodes(Duration.ofMillis(TTL_CHECK_MILLIS))) {
      FaultSuite.runAndCheck(
          mode,
          new ZooKeeperControl(server),
          "zookeeper-" + mode.name().toLowerCase(Locale.ROOT),
          true);
    }
  }

  /** Kills, restarts and pauses a ZooKeeper server in its own JVM. */
  private record ZooKeeperControl(ZooKeeperServerJvm server) implements ServerControl {
    @Override
    public String host() {
      return "127.0.0.1";
    }

    @Override
    public int port() {
      return server.port();
    }

    @Override
    public String uriVia(String host, int port) {
      return "zookeeper://" + host + ":" + port + "/faults?sessionTimeout=2s";
    }

    @Override
    public Set<FaultKind> serverFaults() {
      return EnumSet.of(FaultKind.CRASH_SERVER, FaultKind.PAUSE_SERVER);
    }

    @Override
    public void crash() {
      server.kill();
    }

    @Override
    public void restart() {
      server.restart();
    }

    @Override
    public void pause(Duration duration) {
      server.pause(duration);
    }

    @Override
    public Duration explicitPermitReapDelay() {
      return Duration.ofMillis(TTL_CHECK_MILLIS);
    }
  }
}
