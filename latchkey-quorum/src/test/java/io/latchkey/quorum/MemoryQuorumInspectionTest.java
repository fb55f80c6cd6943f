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
    runFirstMemberAhead(name);
    try (Latchkey holderClient = quorumClient();
        Latchkey otherClient = quorumClient();
        Latchkey thirdAlone = Latchkey.using(third.backend(), LatchkeyOptions.defaults())) {
      // The third member is held by another owner: only the first two count, the token is the
      // larger of their values (ADR 0009's rank 2 + 2 - 3 = 1), and the write-back raises the
      // second's counter to it.
      Lease blocking = thirdAlone.lock(name).tryAcquire().orElseThrow();
      Lease lease = holderClient.lock(name).tryAcquire().orElseThrow();
      blocking.release();
      assertThat(lease.fencingToken() & QuorumAcquisition.MEMBER_TOKEN_MASK)
          .as("the first member's value decided the token")
          .isGreaterThan(100);

      assertThat(tokenSeenBy(otherClient, name, lease)).isEqualTo(lease.fencingToken());
      lease.release();
    }
  }

  @Test
  void whenEveryMemberCountsTheTokenIsTheMajorityThLargestValueAndNothingIsWrittenBack()
      throws Exception {
    String name = "inspect-rank";
    runFirstMemberAhead(name);
    try (Latchkey holderClient = quorumClient();
        Latchkey otherClient = quorumClient()) {
      // All three count: the token is the second largest of (101, 1, 1), which a majority (the
      // second and third members) holds already.
      Lease lease = holderClient.lock(name).tryAcquire().orElseThrow();
      assertThat(lease.fencingToken() & QuorumAcquisition.MEMBER_TOKEN_MASK).isEqualTo(1);
      assertThat(tokenSeenBy(otherClient, name, lease)).isEqualTo(lease.fencingToken());
      long token = lease.fencingToken();
      lease.release();

      Lease next = otherClient.lock(name).tryAcquire().orElseThrow();
      assertThat(next.fencingToken()).isGreaterThan(token);
      next.release();
    }
  }

  /** The first member alone grants the lock a hundred times: its counter runs far ahead. */
  private void runFirstMemberAhead(String name) {
    try (Latchkey alone = Latchkey.using(first.backend(), LatchkeyOptions.defaults())) {
      for (int i = 0; i < 100; i++) {
        alone.lock(name).tryAcquire().orElseThrow().release();
      }
    }
  }

  private static long tokenSeenBy(Latchkey client, String name, Lease lease) {
    HolderInfo seen =
        client.admin().inspect(name).orElseThrow().holders().stream()
            .filter(holder -> holder.owner().equals(lease.holderId()))
            .findFirst()
            .orElseThrow();
    return seen.fencingToken();
  }
}
