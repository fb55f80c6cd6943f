package io.latchkey.cli;

import org.junit.jupiter.api.Test;

/** The commands on MariaDB (jdbc:mariadb:, table mode), on a server the test starts. */
class MariaDbCommandsIT extends SharedBackendCommands {
  @Override
  ServerForTests startServer() {
    return ServerForTests.mariaDb();
  }

  @Test
  void reapEvictsADeadHoldersLongLease() throws Exception {
    reapEvictsTheLongLeaseOfAKilledHolder();
  }
}
