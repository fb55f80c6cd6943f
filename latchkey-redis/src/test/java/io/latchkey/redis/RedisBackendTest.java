package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.BackendTimeoutException;
import io.latchkey.BackendUnavailableException;
import io.latchkey.ClientInfo;
import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LeasedSemaphore;
import io.latchkey.LockInfo;
import io.latchkey.servers.RedisTestServer;
import io.latchkey.spi.ResourceType;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What the conformance kit cannot see: the key layout on the server, script reloading, server
 * restarts and outages, the round trips per operation, pub/sub wake-ups, presence records and
 * authentication. Every server is started by the test itself.
 */
class RedisBackendTest {
  private static @Nullable RedisTestServer shared;

  private static final Set<String> COMMANDS_INSIDE_LOCK_SCRIPTS =
      Set.of(
          "cmdstat_time",
          "cmdstat_hgetall",
          "cmdstat_hset",
          "cmdstat_hdel",
          "cmdstat_get",
          "cmdstat_set",
          "cmdstat_pexpire",
          "cmdstat_zscore",
          "cmdstat_zrem",
          "cmdstat_zrange",
          "cmdstat_zrangebyscore",
          "cmdstat_publish");

  private final List<AutoCloseable> opened = new ArrayList<>();

  @BeforeAll
  static void startRedis() {
    shared = RedisTestServer.start();
  }

  @AfterAll
  static void stopRedis() {
    if (shared != null) {
      shared.close();
    }
  }

  @AfterEach
  void closeEverything() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
    opened.clear();
  }

  private static RedisTestServer redis() {
    if (shared == null) {
      throw new IllegalStateException("redis-server has not been started");
    }
    return shared;
  }

  private static LatchkeyOptions.Builder options() {
    return LatchkeyOptions.builder()
        .leaseTime(Duration.ofSeconds(2))
        .renewInterval(Duration.ofMillis(300))
        .operationTimeout(Duration.ofSeconds(1))
        .recheckInterval(Duration.ofMillis(200))
        .closeOnShutdown(false);
  }

  private Latchkey connect(String uri) {
    return connect(uri, UnaryOperator.identity());
  }

  private Latchkey connect(String uri, UnaryOperator<LatchkeyOptions.Builder> tweaks) {
    Latchkey client = Latchkey.connect(uri, tweaks.apply(options()).build());
    opened.add(client);
    return client;
  }

  private RedisTestServer startServer(RedisTestServer.Builder builder) {
    RedisTestServer server = builder.start();
    opened.add(0, server);
    return server;
  }

  private static long exists(RedisTestServer server, String... keys) {
    String[] command = new String[keys.length + 1];
    command[0] = "EXISTS";
    System.arraycopy(keys, 0, command, 1, keys.length);
    return (Long) Objects.requireNonNull(server.command(command));
  }

  static List<String> awkwardNames() {
    return RedisKeysTest.awkwardNames().toList();
  }

  @ParameterizedTest
  @MethodSource("awkwardNames")
  void anyNameLocksUnderItsOwnKeysAndListsUnderItsOwnName(String name) throws InterruptedException {
    RedisKeys keys = new RedisKeys(RedisConnectionSettings.DEFAULT_PREFIX);
    Latchkey holder = connect(redis().uri());
    Latchkey other = connect(redis().uri());

    Lease lease = holder.lock(name).acquire(Duration.ZERO);

    assertThat(exists(redis(), keys.lock(name), keys.lockFence(name))).isEqualTo(2);
    assertThat(other.lock(name).tryLock()).isFalse();
    assertThat(other.admin().inspect(name)).map(LockInfo::name).contains(name);
    assertThat(other.admin().list()).extracting(LockInfo::name).contains(name);
    lease.release();
    assertThat(exists(redis(), keys.lock(name))).isZero();
    assertThat(exists(redis(), keys.lockFence(name))).as("the fencing counter stays").isOne();
  }

  @Test
  void namesThatLookAlikeEscapedAreDifferentLocks() throws InterruptedException {
    Latchkey first = connect(redis().uri());
    Latchkey second = connect(redis().uri());
    String name = "lookalike/" + System.nanoTime();

    try (Lease braces = first.lock(name + "a}b").acquire(Duration.ZERO);
        Lease escaped = second.lock(name + "a%7Db").acquire(Duration.ZERO);
        Lease high = second.lock(name + "\uD800").acquire(Duration.ZERO);
        Lease question = first.lock(name + "?").acquire(Duration.ZERO)) {
      assertThat(List.of(braces, escaped, high, question)).allMatch(Lease::isValid);
    }
  }

  @Test
  void theKeyPrefixSeparatesClientsAndTheDatabaseIsSelected() throws InterruptedException {
    String name = "prefixed/" + System.nanoTime();
    Latchkey app1 = connect(redis().uri() + "/2?prefix=app1:");
    Latchkey app2 = connect(redis().uri() + "/2?prefix=app2:");

    try (Lease one = app1.lock(name).acquire(Duration.ZERO);
        Lease two = app2.lock(name).acquire(Duration.ZERO)) {
      assertThat(one.isValid()).isTrue();
      assertThat(two.isValid()).isTrue();
      assertThat(app1.backendDescription()).endsWith("/2?prefix=app1:");
      assertThat(redis().info("keyspace")).containsKey("db2");
    }
  }

  @Test
  void aFlushedScriptCacheIsRefilledByTheNextCall() throws InterruptedException {
    DistributedLock lock = connect(redis().uri()).lock("noscript/" + System.nanoTime());
    long before;
    try (Lease lease = lock.acquire(Duration.ZERO)) {
      before = lease.fencingToken();
    }

    redis().command("SCRIPT", "FLUSH");

    try (Lease lease = lock.acquire(Duration.ZERO)) {
      assertThat(lease.fencingToken()).isGreaterThan(before);
    }
  }

  @Test
  void uncontendedAcquireAndReleaseAreOneEvalshaEach() throws InterruptedException {
    RedisTestServer server = startServer(RedisTestServer.builder());
    // A long lease keeps the watchdog and the presence refresh out of the measurement.
    DistributedLock lock =
        connect(
                server.uri(),
                o ->
                    o.leaseTime(Duration.ofMinutes(1))
                        .renewInterval(Duration.ofSeconds(20))
                        .operationTimeout(Duration.ofSeconds(5)))
            .lock("commands");
    lock.lock();
    lock.unlock();

    server.command("CONFIG", "RESETSTAT");
    lock.lock();
    lock.unlock();

    // Commandstats also counts the commands that scripts call; those cost no round trip.
    Map<String, String> stats = new TreeMap<>(server.info("commandstats"));
    stats.keySet().removeIf(k -> k.startsWith("cmdstat_config") || k.startsWith("cmdstat_info"));
    assertThat(stats.get("cmdstat_evalsha")).startsWith("calls=2,");
    assertThat(stats.keySet())
        .allMatch(
            k -> k.equals("cmdstat_evalsha") || COMMANDS_INSIDE_LOCK_SCRIPTS.contains(k),
            "a command inside the acquire or release script");
  }

  @Test
  void aContendedReleaseWakesTheWaiterWithoutWaitingForTheRecheck() throws Exception {
    String name = "wakeup/" + System.nanoTime();
    RedisKeys keys = new RedisKeys(RedisConnectionSettings.DEFAULT_PREFIX);
    Latchkey holder = connect(redis().uri(), o -> o.leaseTime(Duration.ofMinutes(1)));
    Latchkey waiter =
        connect(
            redis().uri(),
            o -> o.recheckInterval(Duration.ofSeconds(30)).queueKeepAlive(Duration.ofSeconds(90)));
    Lease held = holder.lock(name).acquire(Duration.ZERO);

    CompletableFuture<Lease> waiting =
        waiter.lock(name).acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                ((List<?>)
                        Objects.requireNonNull(
                            redis()
                                .command(
                                    "PUBSUB", "NUMSUB", keys.wakeups(ResourceType.LOCK, name))))
                    .get(1)
                    .equals(1L));
    held.release();

    Lease granted = waiting.get(5, TimeUnit.SECONDS);
    assertThat(granted.isValid()).isTrue();
    granted.release();
  }

  @Test
  void aRestartUnderAHolderIsReportedAsLeaseLoss() throws InterruptedException {
    RedisTestServer server = startServer(RedisTestServer.builder());
    DistributedLock lock = connect(server.uri()).lock("restart");
    Lease lease = lock.acquire(Duration.ZERO);
    AtomicReference<LeaseLostException> heard = new AtomicReference<>();
    lease.onLost(heard::set);

    server.restart();

    await().atMost(Duration.ofSeconds(10)).until(() -> heard.get() != null);
    assertThat(lease.isValid()).isFalse();
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
    assertThat(connect(server.uri()).lock("restart").tryLock()).isTrue();
  }

  /**
   * A thread that waits behind a holder of its own client (known to the client once the lock was
   * handed over within it) waits inside the client, with no place on the server. When a restart
   * empties the server, the holder's next renewal finds its grant gone (the lease, 20 s, outlasts
   * the restart: the grant is not lost by its lease running out, which would also release it), and
   * the local waiter must then try by itself at once: nothing on the server would wake it, and its
   * longest sleep (the re-check interval, at most a third of the queue keep-alive: a minute here)
   * is far beyond the test's bound.
   */
  @Test
  void aRestartThatLosesTheHolderWakesTheWaiterBehindItInItsClient() throws Exception {
    RedisTestServer server = startServer(RedisTestServer.builder());
    DistributedLock lock =
        connect(
                server.uri(),
                o ->
                    o.leaseTime(Duration.ofSeconds(20))
                        .recheckInterval(Duration.ofMinutes(1))
                        .queueKeepAlive(Duration.ofMinutes(3)))
            .lock("restart-local");
    Lease first = lock.acquire(Duration.ZERO);
    CompletableFuture<Lease> second = acquireOnItsOwnThread(lock, "second");
    first.release(); // hands the lock over to the second thread
    Lease held = second.get(10, TimeUnit.SECONDS);
    AtomicReference<LeaseLostException> heard = new AtomicReference<>();
    held.onLost(heard::set);
    CompletableFuture<Lease> third = acquireOnItsOwnThread(lock, "third");

    server.restart(); // without persistence: the holder's record is gone

    Lease after = third.get(15, TimeUnit.SECONDS);
    assertThat(heard.get()).as("the holder's loss").isNotNull();
    assertThat(held.isValid()).isFalse();
    assertThat(after.fencingToken()).isGreaterThan(held.fencingToken());
  }

  /**
   * Starts an acquire of the lock on a thread of its own and returns once that thread waits for it.
   */
  private static CompletableFuture<Lease> acquireOnItsOwnThread(DistributedLock lock, String name) {
    AtomicReference<@Nullable Thread> acquirer = new AtomicReference<>();
    CompletableFuture<Lease> acquired =
        CompletableFuture.supplyAsync(
            () -> {
              acquirer.set(Thread.currentThread());
              try {
                return lock.acquire(Duration.ofMinutes(1));
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
              }
            },
            runnable -> new Thread(runnable, name).start());
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              Thread thread = acquirer.get();
              return thread != null
                  && (thread.getState() == Thread.State.WAITING
                      || thread.getState() == Thread.State.TIMED_WAITING);
            });
    assertThat(acquired).isNotDone();
    return acquired;
  }

  @Test
  void fencingTokensKeepGrowingWhenARestartLosesTheCounters() throws InterruptedException {
    RedisTestServer server = startServer(RedisTestServer.builder());
    Latchkey client = connect(server.uri());
    DistributedLock lock = client.lock("fence-restart");
    LeasedSemaphore permits = client.leasedSemaphore("fence-restart");
    long lockToken;
    long permitToken;
    try (Lease lease = lock.acquire(Duration.ZERO)) {
      lockToken = lease.fencingToken();
    }
    assertThat(permits.trySetPermits(1)).isTrue();
    try (Lease permit = permits.acquire(Duration.ZERO)) {
      permitToken = permit.fencingToken();
    }

    server.restart(); // without persistence: every counter is gone

    assertThat(exists(server, new RedisKeys("latchkey:").lockFence("fence-restart"))).isZero();
    AtomicLong tokenAfterRestart = new AtomicLong();
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInSameThread()
        .ignoreExceptions()
        .until(
            () -> {
              try (Lease lease = lock.acquire(Duration.ZERO)) {
                tokenAfterRestart.set(lease.fencingToken());
              }
              return true;
            });
    assertThat(tokenAfterRestart).hasValueGreaterThan(lockToken);
    assertThat(permits.trySetPermits(1)).isTrue();
    try (Lease permit = permits.acquire(Duration.ZERO)) {
      assertThat(permit.fencingToken()).isGreaterThan(permitToken);
    }
  }

  @Test
  void aStoppedServerFailsAcquireWithinTheOperationTimeout() {
    RedisTestServer server = startServer(RedisTestServer.builder());
    DistributedLock lock = connect(server.uri()).lock("down");

    server.stop();

    long start = System.nanoTime();
    assertThatThrownBy(() -> lock.acquire(Duration.ofSeconds(5)))
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining(server.uri());
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isLessThan(Duration.ofSeconds(1).plusMillis(500));
  }

  @Test
  void aServerThatDoesNotAnswerTimesOutWithinTheOperationTimeout() {
    RedisTestServer server = startServer(RedisTestServer.builder());
    DistributedLock lock = connect(server.uri()).lock("silent");
    lock.lock();
    lock.unlock();

    server.command("CLIENT", "PAUSE", "2500", "ALL");

    long start = System.nanoTime();
    assertThatThrownBy(() -> lock.acquire(Duration.ofSeconds(5)))
        .isInstanceOf(BackendTimeoutException.class)
        .hasMessageContaining("within PT1S");
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isLessThan(Duration.ofSeconds(1).plusMillis(500));
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInSameThread()
        .ignoreExceptions()
        .until(lock::tryLock);
    lock.unlock();
  }

  @Test
  void presenceRecordsTellLiveClientsFromGoneOnes() throws Exception {
    Latchkey client = connect(redis().uri());
    Latchkey monitor = connect(redis().uri());
    String name = "presence/" + System.nanoTime();
    client.lock(name).lock();
    RedisKeys keys = new RedisKeys(RedisConnectionSettings.DEFAULT_PREFIX);

    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                monitor.admin().clients().stream()
                    .anyMatch(c -> c.clientId().equals(client.clientId())));
    String holderClient = monitor.admin().inspect(name).orElseThrow().holders().get(0).clientId();

    assertThat(holderClient).isEqualTo(client.clientId());
    assertThat(monitor.admin().clients())
        .filteredOn(c -> c.clientId().equals(client.clientId()))
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.pid()).isEqualTo(ProcessHandle.current().pid());
              assertThat(c.host()).isNotBlank();
              assertThat(c.startedAt()).isBeforeOrEqualTo(Instant.now());
            });
    // A lease and a third: the record outlives one missed refresh, not a dead client.
    assertThat((Long) redis().command("PTTL", keys.presence(client.clientId())))
        .isPositive()
        .isLessThanOrEqualTo(2667);

    client.close();

    assertThat(monitor.admin().clients())
        .extracting(ClientInfo::clientId)
        .doesNotContain(client.clientId());
  }

  @Test
  void passwordsAndAclUsersAuthenticate() throws InterruptedException {
    RedisTestServer server =
        startServer(RedisTestServer.builder().password("default-pw").aclUser("app", "app p@ss"));
    String hostAndPort = server.hostAndPort();

    for (String uri :
        List.of("redis://:default-pw@" + hostAndPort, "redis://app:app%20p%40ss@" + hostAndPort)) {
      Latchkey client = connect(uri);
      assertThat(client.backendDescription()).isEqualTo("redis://" + hostAndPort);
      try (Lease lease = client.lock("auth").acquire(Duration.ZERO)) {
        assertThat(lease.isValid()).isTrue();
      }
    }
    assertThatThrownBy(() -> connect("redis://app:wrong-secret@" + hostAndPort))
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining(hostAndPort)
        .message()
        .doesNotContain("wrong-secret");
  }

  @Test
  void anUnreachableServerIsRefusedAtConnect() {
    RedisTestServer server = startServer(RedisTestServer.builder());
    String uri = server.uri();
    server.stop();

    assertThatThrownBy(() -> connect(uri))
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining("cannot connect to " + uri);
  }
}
