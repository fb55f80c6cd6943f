package io.latchkey.quorum;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.HolderInfo;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.memory.MemoryLockServer;
import org.junit.jupiter.api.Test;

/**
 * Another client reads an exclusive grant's exact fencing token from the members, also when the
 * members that decided the grant were not in step (docs/backends/quorum.md, "Admin").
 */
class MemoryQuorumInspectionTest {
  private final MemoryLockServer first = new MemoryLockServer();
  private final MemoryLockServer second = new MemoryLockServer();
  private final MemoryLockServer third = new MemoryLockServer();

  private Latchkey quorumClient() {
    return Latchkey.using(
        Quorum.builder()
            .member(first.backend())
            .member(second.backend())
            .member(third.backend())
            .build(),
        LatchkeyOptions.defaults());
  }

  @Test
  void anotherClientSeesTheTokenOfAGrantDecidedByMembersOutOfStep() throws Exception {
    String name = "inspect-token";
    // The first member alone grants the lock a hundred times: its counter runs far ahead.
    try (Latchkey alone = Latchkey.using(first.backend(), LatchkeyOptions.defaults())) {
      for (int i = 0; i < 100; i++) {
        alone.lock(name).tryAcquire().orElseThrow().release();
      }
    }
    try (Latchkey holderClient = quorumClient();
        Latchkey otherClient = quorumClient()) {
      // In-memory members answer at once, in order: the first two decide, with the first's value
      // the larger; the write-back raises the second's counter to it, and the third's grant (its
      // own small token) attaches afterwards.
      Lease lease = holderClient.lock(name).tryAcquire().orElseThrow();
      assertThat(lease.fencingToken() & QuorumAcquisition.MEMBER_TOKEN_MASK)
          .as("the first member's value decided the token")
          .isGreaterThan(100);

      HolderInfo seen =
          otherClient.admin().inspect(name).orElseThrow().holders().stream()
              .filter(holder -> holder.owner().equals(lease.holderId()))
              .findFirst()
              .orElseThrow();

      assertThat(seen.fencingToken()).isEqualTo(lease.fencingToken());
      lease.release();
    }
  }
}
