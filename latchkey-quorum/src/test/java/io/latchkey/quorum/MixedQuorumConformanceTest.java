package io.latchkey.quorum;

import io.latchkey.memory.MemoryLockServer;
import io.latchkey.testkit.BackendFixture;
import io.latchkey.testkit.ConformanceKit;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole conformance kit on a quorum of members of two kinds: three redis-server processes,
 * whose fencing counters follow each server's clock and are never in step, and two in-memory
 * servers, whose counters are small and in step and which answer at once, so that the Redis members
 * often answer after the decision. Every mix of the two kinds of values meets in the token rank,
 * the write-back and the late member grants (docs/adr/0009-quorum-fencing.md).
 *
 * <p>In the default build (66–108 s at a load of 10–12 on two cores). Its two failures before were
 * a member answer handled twice ({@link MemberRoundTest}) and a shared holder's token seen by
 * another client shifted by late member grants ({@link MemoryQuorumSharedViewTest}, twice: late
 * grants that stayed, then a late grant seen before its undo arrived).
 */
class MixedQuorumConformanceTest extends ConformanceKit {
  private static @Nullable RedisQuorum servers;
  private static @Nullable List<MemoryLockServer> memoryMembers;

  /**
   * Starts all five members, the in-memory ones too: Surefire reruns a failed test with this
   * class's set-up again, and new redis-servers beside in-memory members that kept their epoch
   * records would be members that restarted empty, quarantined for the longest lease (every rerun
   * failed with BUSY so).
   */
  @BeforeAll
  static void startServers() {
    servers = RedisQuorum.start(3);
    memoryMembers = List.of(new MemoryLockServer(), new MemoryLockServer());
  }

  @AfterAll
  static void stopServers() {
    if (servers != null) {
      servers.close();
    }
    if (memoryMembers != null) {
      memoryMembers.forEach(MemoryLockServer::close);
    }
  }

  private static final BackendFixture QUORUM =
      QuorumFixtures.of(
          "quorum-redis-3-memory-2",
          () -> {
            RedisQuorum started = servers;
            List<MemoryLockServer> inMemory = memoryMembers;
            if (started == null || inMemory == null) {
              throw new IllegalStateException("the members have not been started");
            }
            Quorum.Builder builder = Quorum.builder();
            for (int i = 0; i < started.size(); i++) {
              builder.member(started.member(i).uri());
            }
            inMemory.forEach(member -> builder.member(member.backend()));
            return builder.maxLease(QuorumFixtures.KIT_MAX_LEASE).build();
          },
          null);

  @Override
  protected BackendFixture fixture() {
    return QUORUM;
  }
}
