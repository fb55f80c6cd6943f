package io.latchkey.quorum;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.HolderInfo;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.OwnerToken;
import io.latchkey.memory.MemoryLockServer;
import org.junit.jupiter.api.Test;

/**
 * Another client reads an exclusive grant's exact fencing token from the members, also when the
 * members that decided the grant were not in step (docs/backends/quorum.md, "Admin"); and a member
 * that still holds the owner's earlier grant does not count for the next one.
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

  @Test
  void aMemberStillHoldingTheOwnersEarlierGrantDoesNotCountForTheNextGrant() {
    String name = "stale-hold";
    runAhead(first, name, 100);
    runAhead(second, name, 50);
    OwnerToken owner = OwnerToken.random();
    try (Latchkey client = quorumClient();
        Latchkey secondAlone = Latchkey.using(second.backend(), LatchkeyOptions.defaults())) {
      // Values (101, 51, 1): the token is the second largest, the second member's.
      Lease earlier = client.lock(name).withOwner(owner).tryAcquire().orElseThrow();
      assertThat(earlier.fencingToken() & QuorumAcquisition.MEMBER_TOKEN_MASK).isEqualTo(51);
      // The second member keeps a hold of the owner after the quorum's release, as it does when
      // that release has not reached it yet.
      Lease extra = secondAlone.lock(name).withOwner(owner).tryAcquire().orElseThrow();
      assertThat(extra.fencingToken()).as("a re-entry of its grant of the quorum").isEqualTo(51);
      earlier.release();

      // Values (102, 51 re-entered, 2): counting the re-entry, the second largest would be the
      // earlier token again. Only the members that counted up count: the larger of 102 and 2.
      Lease next = client.lock(name).withOwner(owner).tryAcquire().orElseThrow();
      assertThat(next.fencingToken()).isGreaterThan(earlier.fencingToken());
      assertThat(next.fencingToken() & QuorumAcquisition.MEMBER_TOKEN_MASK).isEqualTo(102);
      next.release();
    }
  }

  /** The first member alone grants the lock a hundred times: its counter runs far ahead. */
  private void runFirstMemberAhead(String name) {
    runAhead(first, name, 100);
  }

  /** One member alone grants the lock {@code times} times: its counter runs ahead. */
  static void runAhead(MemoryLockServer member, String name, int times) {
    try (Latchkey alone = Latchkey.using(member.backend(), LatchkeyOptions.defaults())) {
      for (int i = 0; i < times; i++) {
        alone.lock(name).tryAcquire().orElseThrow().release();
      }
    }
  }

  /** The token of {@code lease}'s holder as {@code client} inspects it. */
  static long tokenSeenBy(Latchkey client, String name, Lease lease) {
    HolderInfo seen =
        client.admin().inspect(name).orElseThrow().holders().stream()
            .filter(holder -> holder.owner().equals(lease.holderId()))
            .findFirst()
            .orElseThrow();
    return seen.fencingToken();
  }
}
