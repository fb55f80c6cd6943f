package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.BackendUnavailableException;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LeasedSemaphore;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.LatchkeyBackend;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A single ZooKeeper server restarted empty under holders (issue 10): it comes back on the same
 * port with a new data directory, as a wiped container would. Its zxids start over, below the
 * tokens handed out before, and it refuses the sessions of clients that saw a later zxid ("has seen
 * zxid"), so the holder's client gets no answer until Curator gives the session up after its
 * timeout and opens a new one. What must hold all the same:
 *
 * <ul>
 *   <li>the holder hears that its lock and its permit are lost within a bound (the session timeout
 *       and Curator's reconnection), and their releases throw {@link LeaseLostException};
 *   <li>a new client, and the holder's own client once it has a new session, are granted the same
 *       names with fencing tokens larger than every token handed out before the wipe;
 *   <li>nothing hangs: every call is bounded, and so is the test.
 * </ul>
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ZooKeeperEmptyRestartTest {
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(2);

  /** The session timeout (3 s) and Curator's reconnection, with a loaded machine's slack. */
  private static final Duration LOSS_BOUND = Duration.ofSeconds(15);

  /** Long enough for the holder's client to get its new session. */
  private static final Duration WAIT = Duration.ofSeconds(30);

  private static final String NAMESPACE = "wiped";

  /** A quorum's raise of a lock's counter before the wipe: far above the zxids of a test server. */
  private static final long RAISE = 1L << 40;

  private @Nullable TestingServer server;
  private final List<Latchkey> clients = new ArrayList<>();

  @BeforeEach
  void startServer() throws Exception {
    server = new TestingServer(spec(-1), true);
  }

  @AfterEach
  void stopEverything() throws IOException {
    clients.forEach(Latchkey::close);
    if (server != null) {
      server.close();
    }
  }

  @Test
  void aLockAndAPermitAreLostAndTokensAfterTheWipeAreLarger() throws Exception {
    Latchkey holder = connect();
    // Some history before the wipe, so that the server's zxids are well past where a new one
    // starts.
    for (int i = 0; i < 20; i++) {
      holder.lock("history").acquire(Duration.ZERO).release();
    }
    Lease lock = holder.lock("orders").acquire(Duration.ZERO);
    LeasedSemaphore permits = holder.leasedSemaphore("slots");
    permits.trySetPermits(1);
    Lease permit = permits.acquire(Duration.ZERO);
    long highestBefore = Math.max(lock.fencingToken(), permit.fencingToken());
    LeasedSemaphore ttlPermits = holder.leasedSemaphore("ttl-slots");
    if (ZooKeeperTestServers.ttlNodes()) {
      // An explicit lease: a TTL node, which no session owns.
      ttlPermits.trySetPermits(1);
      Lease ttlPermit = ttlPermits.tryAcquire(Duration.ofMinutes(1)).orElseThrow();
      highestBefore = Math.max(highestBefore, ttlPermit.fencingToken());
    }
    CompletableFuture<LeaseLostException> lockLost = new CompletableFuture<>();
    lock.onLost(lockLost::complete);
    CompletableFuture<LeaseLostException> permitLost = new CompletableFuture<>();
    permit.onLost(permitLost::complete);

    long wiped = System.nanoTime();
    restartEmpty();

    assertThat(lockLost).as("the lock's loss is heard").succeedsWithin(LOSS_BOUND);
    assertThat(permitLost).as("the permit's loss is heard").succeedsWithin(LOSS_BOUND);
    System.out.printf(
        "empty restart: losses heard %d ms after the restart began%n",
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - wiped));
    assertThat(lock.isValid()).isFalse();
    assertThatThrownBy(lock::release).isInstanceOf(LeaseLostException.class);
    assertThatThrownBy(permit::release).isInstanceOf(LeaseLostException.class);

    // A brand-new client.
    Latchkey other = connect();
    Lease otherLock = other.lock("orders").acquire(WAIT);
    LeasedSemaphore otherPermits = other.leasedSemaphore("slots");
    otherPermits.trySetPermits(1);
    Lease otherPermit = otherPermits.acquire(WAIT);
    assertThat(otherLock.fencingToken())
        .as("a token after the wipe is larger than every token before it")
        .isGreaterThan(highestBefore);
    assertThat(otherPermit.fencingToken()).isGreaterThan(highestBefore);
    if (ZooKeeperTestServers.ttlNodes()) {
      LeasedSemaphore otherTtlPermits = other.leasedSemaphore("ttl-slots");
      otherTtlPermits.trySetPermits(1);
      try (Lease ttlPermit = otherTtlPermits.tryAcquire(Duration.ofMinutes(1)).orElseThrow()) {
        assertThat(ttlPermit.fencingToken()).isGreaterThan(highestBefore);
      }
    }
    otherLock.release();
    otherPermit.release();

    // The holder's own client, on its new session.
    Lease again = holder.lock("orders").acquire(WAIT);
    Lease permitAgain = permits.acquire(WAIT);
    System.out.printf(
        "empty restart: the holder's client granted again %d ms after the restart began%n",
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - wiped));
    assertThat(again.fencingToken()).isGreaterThan(otherLock.fencingToken());
    assertThat(permitAgain.fencingToken()).isGreaterThan(otherPermit.fencingToken());
    again.release();
    permitAgain.release();
  }

  /**
   * A lock that a quorum raised before the wipe: the holder's client knew its fence record and
   * creates its next node there with the record's offset, which the new data does not have. Its
   * grant must not take that offset, or its token would be above the next holders' (tokens of one
   * name must grow in grant order).
   */
  @Test
  void anOffsetFromBeforeTheWipeIsNotTakenAfterIt() throws Exception {
    Latchkey holder = connect();
    long first = acquireAndRelease(holder, "raised");
    try (LatchkeyBackend member =
        ZooKeeperBackend.open(
            URI.create(uri()),
            new BackendContext("quorum", OPERATION_TIMEOUT, Duration.ofSeconds(30)))) {
      member
          .fences()
          .orElseThrow()
          .raiseLockFence("raised", first + RAISE)
          .toCompletableFuture()
          .get(10, TimeUnit.SECONDS);
    }
    // The holder's client lists the record here, and keeps its offset for its next node.
    assertThat(acquireAndRelease(holder, "raised")).isGreaterThan(first + RAISE);

    restartEmpty();

    // An attempt made before the holder's client has seen the server go can end, as with any
    // server that is down, in BackendTimeoutException within the operation timeout; the next one,
    // once its client has a new session, is granted.
    long byTheHolder =
        await()
            .atMost(Duration.ofSeconds(30))
            .ignoreExceptionsInstanceOf(BackendUnavailableException.class)
            .until(() -> acquireAndRelease(holder, "raised"), token -> true);
    long byAnother = acquireAndRelease(connect(), "raised");
    assertThat(byAnother).as("the next holder's token").isGreaterThan(byTheHolder);
  }

  private static long acquireAndRelease(Latchkey client, String name) throws Exception {
    try (Lease lease = client.lock(name).acquire(WAIT)) {
      return lease.fencingToken();
    }
  }

  /**
   * Stops the server, deletes its data and starts a new one on the same port with an empty data
   * directory.
   */
  private void restartEmpty() throws Exception {
    TestingServer old = server();
    int port = old.getPort();
    server = null;
    old.close();
    server = new TestingServer(spec(port), true);
  }

  /**
   * @param port the port, or -1 for a free one
   * @return one server with a data directory of its own, deleted when it closes
   */
  private static InstanceSpec spec(int port) {
    return new InstanceSpec(null, port, -1, -1, true, -1, ZooKeeperTestServers.TICK_MILLIS, 0);
  }

  private String uri() {
    return ZooKeeperTestServers.uri(server().getConnectString(), NAMESPACE);
  }

  private Latchkey connect() {
    Latchkey client =
        Latchkey.connect(
            uri(),
            LatchkeyOptions.builder()
                .operationTimeout(OPERATION_TIMEOUT)
                .closeOnShutdown(false)
                .build());
    clients.add(client);
    return client;
  }

  private TestingServer server() {
    if (server == null) {
      throw new IllegalStateException("the server is not running");
    }
    return server;
  }
}
