package io.latchkey.zookeeper;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.latchkey.testkit.faults.FaultKind;
import io.latchkey.testkit.faults.FaultMode;
import io.latchkey.testkit.faults.FaultSuite;
import io.latchkey.testkit.faults.ServerControl;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fault suite on one ZooKeeper server, for the modes ZooKeeper offers (the watchdog lock, the
 * fair lock and the leased semaphore; no explicit lease), with every worker fault (pauses, kills,
 * frozen and cut connections) and the server crashed and restarted on its data. Clients ask for a 2
 * s session, the suite's lease. {@link FaultSuite} lists the properties (duration per mode, default
 * 2 minutes; seed; modes; kinds). Reports go to {@code target/fault-reports/zookeeper-MODE.txt}.
 * Run with {@code mvn -B -pl latchkey-zookeeper verify -Psoak -Dtest=ZooKeeperFaultSuiteTest
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 *
 * <p>A dead holder's node goes when its session expires (2 s, checked by the server every tick), so
 * the liveness bound (lease + renew interval) is asserted as for the lease backends. The server
 * runs in this JVM, so it cannot be paused with SIGSTOP; {@link FaultKind#PAUSE_SERVER} is not
 * injected.
 */
@Tag("slow")
class ZooKeeperFaultSuiteTest {

  @ParameterizedTest
  @EnumSource(
      value = FaultMode.class,
      names = {"WATCHDOG_LOCK", "FAIR_LOCK", "LEASED_SEMAPHORE"})
  void everyFaultKind(FaultMode mode) throws Exception {
    assumeTrue(FaultSuite.selected(mode), mode + " is not in -D" + FaultSuite.MODES);
    try (TestingServer server = ZooKeeperTestServers.start()) {
      FaultSuite.runAndCheck(
          mode,
          new ZooKeeperControl(server),
          "zookeeper-" + mode.name().toLowerCase(Locale.ROOT),
          true);
    }
  }

  /** Crashes and restarts an in-process ZooKeeper server. */
  private static final class ZooKeeperControl implements ServerControl {
    private final TestingServer server;

    ZooKeeperControl(TestingServer server) {
      this.server = server;
    }

    @Override
    public String host() {
      return "127.0.0.1";
    }

    @Override
    public int port() {
      return server.getPort();
    }

    @Override
    public String uriVia(String host, int port) {
      return "zookeeper://" + host + ":" + port + "/faults?sessionTimeout=2s";
    }

    @Override
    public Set<FaultKind> serverFaults() {
      return EnumSet.of(FaultKind.CRASH_SERVER);
    }

    @Override
    public void crash() {
      try {
        server.stop();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public void restart() {
      try {
        server.restart();
      } catch (Exception e) {
        throw new IllegalStateException("cannot restart the ZooKeeper server", e);
      }
    }

    @Override
    public void pause(Duration duration) {
      throw new UnsupportedOperationException("an in-process server cannot be paused");
    }
  }
}
