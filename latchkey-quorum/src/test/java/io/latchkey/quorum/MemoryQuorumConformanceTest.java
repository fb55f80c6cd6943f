package io.latchkey.quorum;

import io.latchkey.memory.MemoryLockServer;
import io.latchkey.testkit.BackendFixture;
import io.latchkey.testkit.ConformanceKit;

/** The whole conformance kit on a quorum of three in-memory servers. */
class MemoryQuorumConformanceTest extends ConformanceKit {
  private static final MemoryLockServer A = new MemoryLockServer();
  private static final MemoryLockServer B = new MemoryLockServer();
  private static final MemoryLockServer C = new MemoryLockServer();

  private static final BackendFixture QUORUM =
      QuorumFixtures.of(
          "quorum-memory",
          () ->
              Quorum.builder()
                  .member(A.backend())
                  .member(B.backend())
                  .member(C.backend())
                  .maxLease(QuorumFixtures.KIT_MAX_LEASE)
                  .build(),
          null);

  @Override
  protected BackendFixture fixture() {
    return QUORUM;
  }
}
