package io.latchkey.cli;

import org.junit.jupiter.api.Test;

/**
 * The commands on a quorum of three Redis members (issue 11: {@code ls}, {@code inspect}, {@code
 * unlock --force}, {@code reap} and {@code exec} across the members), each member asking for a
 * password that no command may print.
 */
class QuorumCommandsIT extends SharedBackendCommands {
  @Override
  ServerForTests startServer() {
    return ServerForTests.redisQuorum();
  }

  @Test
  void reapEvictsADeadHoldersLongLease() throws Exception {
    reapEvictsTheLongLeaseOfAKilledHolder();
  }
}
