package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HandOverResult;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.Wakeup;
import io.latchkey.testkit.ContendedCycles;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Table mode hands a released lock to a waiter of the releasing client in the release's own
 * transaction ({@link LockStore#releaseAndHandOver}), on real PostgreSQL, MariaDB and H2 servers:
 * the queue head is granted without an attempt of its own and without a wake-up, another head is
 * woken as by a plain release, and eight threads of one client on one PostgreSQL lock spend two
 * transactions per cycle (a waiter's refused attempt, the release that grants it) instead of three.
 * (On MariaDB and H2 the poller's reads, which depend on time, would be counted too.) Advisory and
 * row modes do not hand over.
 */
class JdbcHandOverTest {
  @RegisterExtension static final SqlServers SERVERS = new SqlServers();

  private static final int THREADS = 8;
  private static final int CYCLES_PER_THREAD = 25;

  @Test
  void postgresHandsOverToTheHeadWithoutAWakeup() throws Exception {
    assertHandOvers(SERVERS.postgres().jdbcUrl() + newTables("&"), true);
  }

  @Test
  void mariaDbHandsOverToTheHead() throws Exception {
    assertHandOvers(SERVERS.mariaDb().jdbcUrl() + newTables("&"), false);
  }

  @Test
  void h2HandsOverToTheHead() throws Exception {
    assertHandOvers(h2Url() + newTables(";"), false);
  }

  @Test
  void connectionBoundModesDoNotHandOver() {
    for (String mode : List.of("table", "advisory", "row")) {
      String uri = SERVERS.postgres().jdbcUrl() + newTables("&") + "&latchkey.mode=" + mode;
      try (LatchkeyBackend backend = open(uri)) {
        assertThat(backend.locks().handsOver()).as(mode).isEqualTo(mode.equals("table"));
      }
    }
  }

  @Test
  void postgresContendedCyclesTakeOneTransaction() throws Exception {
    assertTransactionsPerCycle(SERVERS.postgres().jdbcUrl(), 1.5);
  }

  /**
   * A holds, B and C queue. A's release with B's attempt grants B (the head) in the same step, and
   * publishes nothing: the first wake-up is the one for C, when B releases plainly. Then with C
   * holding, D and E queued: C's release with E's attempt grants nobody and wakes D, the head. D's
   * release hands over to E; E's, with nobody queued, to F, which never queued (a waiter of the
   * releasing client that waited behind it without asking).
   */
  private static void assertHandOvers(String uri, boolean pushesWakeups) throws Exception {
    try (LatchkeyBackend backend = open(uri)) {
      LockStore locks = backend.locks();
      assertThat(locks.handsOver()).isTrue();
      String name = "hand-over";
      List<String> woken = new CopyOnWriteArrayList<>();
      get(backend.wakeups().subscribe(ResourceType.LOCK, name, wakeup -> woken.add(owner(wakeup))));

      AcquireResult a = get(locks.tryAcquire(request(name, "a")));
      assertThat(a.isGranted()).isTrue();
      assertThat(get(locks.tryAcquire(request(name, "b"))).isGranted()).isFalse();
      assertThat(get(locks.tryAcquire(request(name, "c"))).isGranted()).isFalse();

      HandOverResult handedOver =
          get(
              locks.releaseAndHandOver(
                  grant(name, "a", a), LockMode.EXCLUSIVE, request(name, "b")));
      assertThat(handedOver.released()).isEqualTo(ReleaseResult.released(0));
      AcquireResult b = Objects.requireNonNull(handedOver.next(), "B's attempt was not made");
      assertThat(b.isGranted()).isTrue();
      assertThat(b.fencingToken()).isGreaterThan(a.fencingToken());
      LockInfo held = get(backend.admin().inspect(name)).orElseThrow();
      assertThat(held.holders())
          .singleElement()
          .satisfies(h -> assertThat(h.owner()).isEqualTo("b"));
      assertThat(held.queuedWaiters()).isEqualTo(1);

      assertThat(get(locks.release(grant(name, "b", b), LockMode.EXCLUSIVE)).wasHeld()).isTrue();
      if (pushesWakeups) {
        await().atMost(Duration.ofSeconds(10)).until(() -> !woken.isEmpty());
        assertThat(woken).as("wake-ups, in order").containsExactly("c");
      }

      AcquireResult c = get(locks.tryAcquire(request(name, "c")));
      assertThat(c.isGranted()).isTrue();
      assertThat(get(locks.tryAcquire(request(name, "d"))).isGranted()).isFalse();
      assertThat(get(locks.tryAcquire(request(name, "e"))).isGranted()).isFalse();
      HandOverResult notTheHead =
          get(
              locks.releaseAndHandOver(
                  grant(name, "c", c), LockMode.EXCLUSIVE, request(name, "e")));
      assertThat(notTheHead).isEqualTo(new HandOverResult(ReleaseResult.released(0), null));
      // The lock is kept for the woken head, D: E is refused, D granted.
      assertThat(get(locks.tryAcquire(request(name, "e"))).isGranted()).isFalse();
      AcquireResult d = get(locks.tryAcquire(request(name, "d")));
      assertThat(d.isGranted()).isTrue();
      if (pushesWakeups) {
        await().atMost(Duration.ofSeconds(10)).until(() -> woken.size() == 2);
        assertThat(woken).containsExactly("c", "d");
      }
      AcquireResult e =
          Objects.requireNonNull(
              get(locks.releaseAndHandOver(
                      grant(name, "d", d), LockMode.EXCLUSIVE, request(name, "e")))
                  .next(),
              "E's attempt was not made");
      assertThat(e.isGranted()).isTrue();
      HandOverResult toUnqueued =
          get(
              locks.releaseAndHandOver(
                  grant(name, "e", e), LockMode.EXCLUSIVE, request(name, "f")));
      AcquireResult f = Objects.requireNonNull(toUnqueued.next(), "F's attempt was not made");
      assertThat(f.isGranted()).isTrue();
      assertThat(f.fencingToken()).isGreaterThan(e.fencingToken());
      assertThat(get(backend.admin().inspect(name)).orElseThrow().holders())
          .singleElement()
          .satisfies(h -> assertThat(h.owner()).isEqualTo("f"));
      if (pushesWakeups) {
        assertThat(woken).as("no wake-up for a hand-over").hasSize(2);
      }
    }
  }

  /**
   * Eight threads of one client on one lock; every transaction takes a connection of its own from
   * the data source (a new one, no pool), which counts them. Without hand-overs a contended cycle
   * costs three (the waiter's refused attempt, the release that wakes it, its attempt after the
   * wake-up); with them, two; with waiters that wait behind their own client's holder without
   * asking, one.
   */
  private static void assertTransactionsPerCycle(String url, double maxPerCycle) throws Exception {
    AtomicLong connections = new AtomicLong();
    DataSource counting = JdbcFixtures.connectionPerCall(url, connections::incrementAndGet);
    LatchkeyOptions options = ContendedCycles.COUNTING_OPTIONS;
    try (Latchkey client =
        Latchkey.using(
            JdbcBackend.builder(counting).createSchema(true).tablePrefix(newPrefix()).build(),
            options)) {
      DistributedLock lock = client.lock("contended");
      lock.lock();
      lock.unlock();
      long before = connections.get();
      ContendedCycles.run(List.of(lock), THREADS, CYCLES_PER_THREAD, Duration.ofMinutes(2));
      double perCycle = (connections.get() - before) / (double) (THREADS * CYCLES_PER_THREAD);
      System.out.printf("%s: %.2f transactions per contended cycle%n", url, perCycle);
      assertThat(perCycle).as("transactions per cycle").isLessThanOrEqualTo(maxPerCycle);
    }
  }

  private static String owner(Wakeup wakeup) {
    String owner = wakeup.targetOwner();
    return owner == null ? "(any)" : owner;
  }

  private static LockRequest request(String name, String owner) {
    return new LockRequest(name, owner, LockMode.EXCLUSIVE, 30_000, false, 30_000);
  }

  private static GrantRef grant(String name, String owner, AcquireResult granted) {
    return new GrantRef(new HolderRef(ResourceType.LOCK, name, owner), granted.fencingToken());
  }

  private static String h2Url() {
    return "jdbc:h2:mem:handover-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
  }

  private static String newPrefix() {
    return "h" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_";
  }

  /** URI parameters for tables of a new prefix, after {@code separator}. */
  private static String newTables(String separator) {
    return separator
        + "latchkey.createSchema=true"
        + separator
        + "latchkey.tablePrefix="
        + newPrefix();
  }

  private static LatchkeyBackend open(String uri) {
    return new JdbcBackendProvider()
        .open(
            URI.create(uri),
            new BackendContext("hand-over", Duration.ofSeconds(10), Duration.ofSeconds(30)));
  }

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }
}
