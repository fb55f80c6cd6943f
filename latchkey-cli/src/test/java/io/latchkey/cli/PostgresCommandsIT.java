package io.latchkey.cli;

import org.junit.jupiter.api.Test;

/** The commands on PostgreSQL (jdbc:postgresql:, table mode), on a server the test starts. */
class PostgresCommandsIT extends SharedBackendCommands {
  @Override
  ServerForTests startServer() {
    return ServerForTests.postgres();
  }

  @Test
  void reapEvictsADeadHoldersLongLease() throws Exception {
    reapEvictsTheLongLeaseOfAKilledHolder();
  }
}
