package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LeasedSemaphore;
import io.latchkey.OwnerToken;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code ls}, {@code inspect}, {@code unlock} and {@code revoke}, as processes against a Redis the
 * test starts.
 */
class MonitorIT {
  private static @Nullable RedisForTests redis;

  private String uri = "";
  private @Nullable Latchkey client;

  @BeforeAll
  static void startRedis() {
    redis = new RedisForTests();
  }

  @AfterAll
  static void stopRedis() {
    if (redis != null) {
      redis.close();
    }
  }

  @BeforeEach
  void freshPrefix() {
    uri = redis().freshUri();
    client = redis().client(uri);
  }

  private static RedisForTests redis() {
    if (redis == null) {
      throw new IllegalStateException("Redis was not started");
    }
    return redis;
  }

  private Latchkey client() {
    if (client == null) {
      throw new IllegalStateException("no client");
    }
    return client;
  }

  @Test
  void lsSaysSoWhenNoLockIsHeld() {
    Cli.Result ls = Cli.run("ls", "--backend", uri);

    assertThat(ls.exitCode()).as(ls.describe()).isZero();
    assertThat(ls.stdout()).startsWith("No locks are held on redis://127.0.0.1:");
    assertThat(ls.stderr()).isEmpty();

    Cli.Result json = Cli.run("ls", "--json", "--backend", uri);
    assertThat(json.exitCode()).as(json.describe()).isZero();
    assertThat(JsonParser.object(json.stdout()).get("locks")).isEqualTo(List.of());
  }

  @Test
  void lsShowsEachHolderWithItsClient() throws Exception {
    DistributedLock lock = client().lock("orders/42");
    Lease outer = lock.acquire(Duration.ZERO);
    Lease inner = lock.acquire(Duration.ZERO);
    String pid = Long.toString(ProcessHandle.current().pid());

    Cli.Result ls = Cli.run(Map.of(BackendOption.ENVIRONMENT_VARIABLE, uri), "ls");

    assertThat(ls.exitCode()).as(ls.describe()).isZero();
    List<String> lines = ls.stdout().lines().toList();
    assertThat(lines).hasSize(2);
    assertThat(lines.get(0).split(" +"))
        .containsExactly(
            "lock", "mode", "holds", "lease", "left", "fencing", "waiters", "client", "host", "pid",
            "owner", "alive");
    assertThat(lines.get(1).split(" +"))
        .containsExactly(
            "orders/42",
            "exclusive",
            "2",
            lines.get(1).split(" +", -1)[3],
            Long.toString(outer.fencingToken()),
            "0",
            client().clientId().substring(0, 8),
            InetAddress.getLocalHost().getHostName(),
            pid,
            "thread",
            Long.toString(Thread.currentThread().getId()),
            "yes");
    assertThat(lines.get(1).split(" +", -1)[3]).matches("\\d+\\.\\ds");
    inner.release();
    outer.release();
  }

  @Test
  void lsJsonHasEveryFieldAndHidesOwnerTokens() throws Exception {
    Lease threadOwned = client().lock("a/thread").acquire(Duration.ZERO);
    OwnerToken token = OwnerToken.random();
    Lease tokenOwned = client().lock("b/token").withOwner(token).acquire(Duration.ZERO);

    Cli.Result ls = Cli.run("ls", "--json", "--backend", uri);

    assertThat(ls.exitCode()).as(ls.describe()).isZero();
    assertThat(ls.stdout().lines().count()).isEqualTo(1);
    assertThat(ls.stdout()).doesNotContain(token.value());
    Map<String, @Nullable Object> document = JsonParser.object(ls.stdout());
    assertThat(document.get("backend")).isEqualTo(uri);
    List<?> locks = (List<?>) Objects.requireNonNull(document.get("locks"));
    assertThat(locks).hasSize(2);
    Map<?, ?> byThread = lockNamed(locks, "a/thread");
    assertThat(byThread.get("held")).isEqualTo(true);
    assertThat(byThread.get("waiters")).isEqualTo(0L);
    Map<?, ?> holder =
        (Map<?, ?>) ((List<?>) Objects.requireNonNull(byThread.get("holders"))).get(0);
    assertThat(holder.get("owner")).isEqualTo(threadOwned.holderId());
    assertThat(holder.get("thread")).isEqualTo(Long.toString(Thread.currentThread().getId()));
    assertThat(holder.get("clientId")).isEqualTo(client().clientId());
    assertThat(holder.get("clientAlive")).isEqualTo(true);
    assertThat(holder.get("host")).isEqualTo(InetAddress.getLocalHost().getHostName());
    assertThat(holder.get("pid")).isEqualTo(ProcessHandle.current().pid());
    assertThat((String) holder.get("clientStartedAt")).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
    assertThat(holder.get("mode")).isEqualTo("exclusive");
    assertThat(holder.get("holds")).isEqualTo(1L);
    assertThat((Long) holder.get("leaseRemainingMillis"))
        .isBetween(1L, RedisForTests.CLIENT_LEASE.toMillis());
    assertThat(holder.get("fencingToken")).isEqualTo(threadOwned.fencingToken());
    Map<?, ?> byToken =
        (Map<?, ?>)
            ((List<?>) Objects.requireNonNull(lockNamed(locks, "b/token").get("holders"))).get(0);
    assertThat((String) byToken.get("owner")).startsWith("tok-").endsWith("...").hasSize(15);
    assertThat(byToken.get("thread")).isNull();

    Cli.Result table = Cli.run("ls", "--backend", uri);
    assertThat(table.stdout()).contains("token tok-").doesNotContain(token.value());
    threadOwned.release();
    tokenOwned.release();
  }

  private static Map<?, ?> lockNamed(List<?> locks, String name) {
    return locks.stream()
        .map(lock -> (Map<?, ?>) lock)
        .filter(lock -> name.equals(lock.get("name")))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no lock " + name + " in " + locks));
  }

  @Test
  void inspectShowsOneLockInDetail() throws Exception {
    String name = "weird \"name\" \\ é ✓";
    Lease lease = client().lock(name).acquire(Duration.ZERO);

    Cli.Result text = Cli.run("inspect", name, "--backend", uri);

    assertThat(text.exitCode()).as(text.describe()).isZero();
    assertThat(text.stdout())
        .startsWith("lock             " + name + "\n")
        .contains("\nholder           1 of 1\n")
        .contains("\n  owner          thread " + Thread.currentThread().getId() + "\n")
        .contains("\n  fencing token  " + lease.fencingToken() + "\n")
        .contains("\n  client         " + client().clientId() + "\n")
        .contains("\n  alive          yes\n")
        .contains("\n  pid            " + ProcessHandle.current().pid() + "\n");

    Cli.Result json = Cli.run("inspect", "--json", name, "--backend", uri);
    assertThat(json.exitCode()).as(json.describe()).isZero();
    Map<String, @Nullable Object> lock = JsonParser.object(json.stdout());
    assertThat(lock.get("name")).isEqualTo(name);
    assertThat(lock.get("held")).isEqualTo(true);
    assertThat((List<?>) lock.get("holders")).hasSize(1);
    lease.release();
  }

  @Test
  void inspectSaysSoWhenTheLockIsFree() {
    Cli.Result text = Cli.run("inspect", "free/lock", "--backend", uri);
    assertThat(text.exitCode()).as(text.describe()).isZero();
    assertThat(text.stdout())
        .isEqualTo(
            """
            Lock 'free/lock' is not held.
            No semaphore, leased semaphore or latch is named 'free/lock'.
            """);

    Cli.Result json = Cli.run("inspect", "--json", "free/lock", "--backend", uri);
    assertThat(JsonParser.object(json.stdout()))
        .containsEntry("name", "free/lock")
        .containsEntry("held", false)
        .containsEntry("waiters", 0L)
        .containsEntry("holders", List.of())
        .containsEntry("semaphore", null)
        .containsEntry("leasedSemaphore", null)
        .containsEntry("latch", null)
        .containsEntry("synchronizersInspected", true);
  }

  @Test
  void lsAndInspectShowSemaphoresLeasedSemaphoresAndLatches() throws Exception {
    assertShowsSynchronizers(
        uri, client(), slots -> slots.tryAcquire(Duration.ofMinutes(5)).orElseThrow());
  }

  /**
   * Checks that {@code ls} and {@code inspect} (tables and JSON) show a semaphore, a leased
   * semaphore with one granted permit and a latch on {@code uri}, which has none yet.
   *
   * @param takePermit takes the one permit of a leased semaphore of 3
   */
  static void assertShowsSynchronizers(String uri, Latchkey client, PermitTaker takePermit)
      throws Exception {
    client.semaphore("stock").trySetPermits(5);
    LeasedSemaphore slots = client.leasedSemaphore("slots");
    slots.trySetPermits(3);
    Lease permit = takePermit.take(slots);
    client.countDownLatch("boot").trySetCount(4);

    Cli.Result ls = Cli.run("ls", "--backend", uri);

    assertThat(ls.exitCode()).as(ls.describe()).isZero();
    List<String> lines = ls.stdout().lines().toList();
    assertThat(lines.get(0)).startsWith("No locks are held on " + client.backendDescription());
    assertThat(lines.get(2).split(" +")).containsExactly("semaphore", "available");
    assertThat(lines.get(3).split(" +")).containsExactly("stock", "5");
    assertThat(lines.get(5).split(" +"))
        .containsExactly(
            "leased",
            "semaphore",
            "total",
            "available",
            "permit",
            "lease",
            "left",
            "fencing",
            "client",
            "host",
            "pid",
            "alive");
    assertThat(lines.get(6).split(" +"))
        .startsWith("slots", "3", "2", LockView.masked(permit.holderId()))
        .contains(Long.toString(permit.fencingToken()), client.clientId().substring(0, 8))
        .endsWith(Long.toString(ProcessHandle.current().pid()), "yes");
    assertThat(lines.subList(8, lines.size())).containsExactly("latch  count", "boot   4");
    assertThat(ls.stdout()).doesNotContain(permit.holderId());

    Map<String, @Nullable Object> json =
        JsonParser.object(Cli.run("ls", "--json", "--backend", uri).stdout());
    assertThat(json.get("semaphores"))
        .isEqualTo(List.of(Map.of("name", "stock", "availablePermits", 5L)));
    assertThat(json.get("latches")).isEqualTo(List.of(Map.of("name", "boot", "count", 4L)));
    Map<?, ?> leased =
        (Map<?, ?>) ((List<?>) Objects.requireNonNull(json.get("leasedSemaphores"))).get(0);
    assertThat(leased.get("totalPermits")).isEqualTo(3L);
    assertThat(leased.get("availablePermits")).isEqualTo(2L);
    Map<?, ?> granted =
        (Map<?, ?>) ((List<?>) Objects.requireNonNull(leased.get("permits"))).get(0);
    assertThat(granted.get("permitId")).isEqualTo(LockView.masked(permit.holderId()));
    assertThat(granted.get("clientId")).isEqualTo(client.clientId());
    assertThat(granted.get("clientAlive")).isEqualTo(true);
    assertThat(granted.get("pid")).isEqualTo(ProcessHandle.current().pid());
    assertThat((Long) granted.get("leaseRemainingMillis")).isBetween(1L, 300_000L);
    assertThat(granted.get("fencingToken")).isEqualTo(permit.fencingToken());

    Cli.Result inspect = Cli.run("inspect", "slots", "--backend", uri);
    assertThat(inspect.exitCode()).as(inspect.describe()).isZero();
    assertThat(inspect.stdout())
        .startsWith("leased semaphore  slots\n")
        .contains("\ntotal             3\n")
        .contains("\navailable         2\n")
        .contains("\n  id              " + LockView.masked(permit.holderId()) + "\n")
        .contains("\n  fencing token   " + permit.fencingToken() + "\n")
        .contains("\n  alive           yes\n");
    Map<String, @Nullable Object> stock =
        JsonParser.object(Cli.run("inspect", "--json", "stock", "--backend", uri).stdout());
    assertThat(stock)
        .containsEntry("held", false)
        .containsEntry("semaphore", Map.of("name", "stock", "availablePermits", 5L))
        .containsEntry("latch", null)
        .containsEntry("synchronizersInspected", true);
    permit.release();
  }

  /** Takes a permit of a leased semaphore. */
  interface PermitTaker {
    Lease take(LeasedSemaphore semaphore) throws Exception;
  }

  @Test
  void unlockForceFreesTheLockAndItsOwnerLearnsOfTheLoss() throws Exception {
    Lease lease = client().lock("stuck").acquire(Duration.ZERO);
    AtomicReference<@Nullable LeaseLostException> lost = new AtomicReference<>();
    lease.onLost(lost::set);

    Cli.Result unlock = Cli.run("unlock", "--force", "stuck", "--backend", uri);

    assertThat(unlock.exitCode()).as(unlock.describe()).isZero();
    assertThat(unlock.stdout())
        .startsWith("Released 'stuck', held by thread " + Thread.currentThread().getId())
        .contains("of client " + client().clientId().substring(0, 8))
        .contains("pid " + ProcessHandle.current().pid());
    assertThat(client().admin().inspect("stuck")).isEmpty();
    await().atMost(Duration.ofSeconds(15)).until(() -> lost.get() != null);

    Cli.Result again = Cli.run("unlock", "--force", "stuck", "--backend", uri);
    assertThat(again.exitCode()).as(again.describe()).isZero();
    assertThat(again.stdout()).isEqualTo("Lock 'stuck' was not held.\n");
  }

  @Test
  void unlockWithoutForceIsRefused() throws Exception {
    Lease lease = client().lock("kept").acquire(Duration.ZERO);

    Cli.Result unlock = Cli.run("unlock", "kept", "--backend", uri);

    assertThat(unlock.exitCode()).as(unlock.describe()).isEqualTo(ExitCodes.USAGE);
    assertThat(unlock.stderr())
        .isEqualTo(
            "latchkey: unlock takes a lock from its owner: add --force (see 'latchkey unlock"
                + " --help')\n");
    assertThat(client().admin().inspect("kept")).isPresent();
    lease.release();
  }

  @Test
  void revokeAsksTheHolderWhichHandsTheLockOver() throws Exception {
    Lease lease = client().lock("exports").acquire(Duration.ZERO);
    lease.onRevocationRequested(Lease::release);

    Cli.Result revoke = Cli.run("revoke", "exports", "--backend", uri);

    assertThat(revoke.exitCode()).as(revoke.describe()).isZero();
    assertThat(revoke.stdout())
        .startsWith("Asked the holders of 'exports' to give it up: thread")
        .contains("of client " + client().clientId().substring(0, 8));
    await().atMost(Duration.ofSeconds(15)).until(() -> !lease.isValid());
    assertThat(client().admin().inspect("exports")).isEmpty();

    Cli.Result again = Cli.run("revoke", "exports", "--backend", uri);
    assertThat(again.exitCode()).as(again.describe()).isZero();
    assertThat(again.stdout()).isEqualTo("Lock 'exports' is not held: nobody to ask.\n");
  }
}
