package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The commands on ZooKeeper, on an in-process server the test starts. ZooKeeper holds a lock as
 * long as its holder's session lives, so there is no explicit lease to give {@code exec}.
 */
class ZooKeeperCommandsIT extends SharedBackendCommands {
  @Override
  ServerForTests startServer() {
    return ServerForTests.zooKeeper();
  }

  @Override
  boolean inspectsSynchronizers() {
    return true;
  }

  /** A watchdog permit: its lease left is the holder's session timeout (3 s here). */
  @Test
  void lsAndInspectShowSemaphoresLeasedSemaphoresAndLatches() throws Exception {
    MonitorIT.assertShowsSynchronizers(uri, client(), slots -> slots.acquire(Duration.ZERO));
  }

  @Test
  void anExplicitLeaseIsRefusedInOneLineAndTheCommandDoesNotRun() {
    Cli.Result exec =
        Cli.run("exec", "jobs/x", "--lease", "5s", "--backend", uri, "--", "echo", "never ran");

    assertOneLineError(exec, ExitCodes.EXEC_FAILED);
    assertThat(exec.stderr())
        .isEqualTo(
            "latchkey: backend "
                + client().backendDescription()
                + " does not support LEASE_TIME\n");
    assertThat(client().admin().inspect("jobs/x")).isEmpty();
  }
}
