package io.latchkey.quorum;

import io.latchkey.testkit.BackendFixture;
import io.latchkey.testkit.ConformanceKit;
import java.net.URI;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The whole conformance kit on a quorum of five redis-server processes.
 *
 * <p>Behind {@code -Psoak}: about 2–3 minutes. Of its last three runs (2026-11-27, the code of
 * commit 226b715) one passed whole and two each failed one test, a different one each time, both
 * timing-dependent on a quorum (docs/backends/quorum.md, Limits):
 *
 * <ul>
 *   <li>{@code SpiWaitQueue.missedTurnWakesTheNextWaiter} stops its barger at the first wake-up for
 *       the next waiter, which the first member that counted the head's turn as missed publishes,
 *       while a majority of members may still keep the lock for the head.
 *   <li>{@code SpiLockStore.releaseNeedsTheGrantsToken} (and, by the same cause, {@code
 *       exclusiveHolderRefusesAnotherOwner}) inspects from another connection and expects the
 *       grant's token; another client sees the value a majority of members record, which equals the
 *       grant's token only when the first members to answer the grant were those with the smallest
 *       tokens (the usual order, not a rule).
 * </ul>
 */
@Tag("slow")
class RedisQuorumConformanceTest extends ConformanceKit {
  private static @Nullable RedisQuorum servers;

  @BeforeAll
  static void startServers() {
    servers = RedisQuorum.start(5);
  }

  @AfterAll
  static void stopServers() {
    if (servers != null) {
      servers.close();
    }
  }

  private static String quorumUri() {
    if (servers == null) {
      throw new IllegalStateException("the redis-servers have not been started");
    }
    return servers.uri(";maxLease=" + QuorumFixtures.KIT_MAX_LEASE.toMinutes() + "m");
  }

  private static final BackendFixture QUORUM =
      QuorumFixtures.of(
          "quorum-redis-5",
          () -> Quorum.fromUri(URI.create(quorumUri())).build(),
          RedisQuorumConformanceTest::quorumUri);

  @Override
  protected BackendFixture fixture() {
    return QUORUM;
  }
}
