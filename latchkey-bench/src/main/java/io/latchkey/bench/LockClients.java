package io.latchkey.bench;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.LockMode;
import io.latchkey.redis.RedisBackend;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.ResourceType;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Some clients of one library on one Redis, and the acquire+release cycle each benchmark repeats.
 * Several clients in one JVM stand for several processes: each has its own connections (and, for
 * latchkey, its own client id, watchdog and wake-up subscription; Lettuce's event loops are shared
 * by every latchkey client of a JVM, by latchkey's design).
 *
 * <p>The three libraries:
 *
 * <ul>
 *   <li>{@link Library#FLOOR}: no lock at all, two EVALSHA calls of a trivial script ({@code return
 *       1}, one key, one argument) per cycle, through Lettuce on one shared connection per client,
 *       as latchkey's Redis backend sends its commands (string codec, async API, the calling thread
 *       waiting for the reply). Under several threads it excludes nobody: it is the ceiling that
 *       two round trips allow, not a lock.
 *   <li>{@link Library#SPI}: latchkey's Redis backend ({@link RedisBackend}) called directly, with
 *       the requests the engine would send and no engine: its scripts, its connection handling and
 *       Lettuce. A busy lock is retried at once, so it is for the uncontended shape only.
 *   <li>{@link Library#LATCHKEY}: {@link Latchkey#connect} on a {@code redis://} URI, default
 *       options but for the watchdog lease.
 *   <li>{@link Library#REDISSON}: {@link Redisson#create} on a single server, default options but
 *       for the watchdog timeout.
 * </ul>
 */
final class LockClients implements AutoCloseable {
  /** Which library the clients are. */
  enum Library {
    FLOOR,
    SPI,
    LATCHKEY,
    REDISSON;

    String label() {
      return this == SPI
          ? "Latchkey SPI"
          : name().charAt(0) + name().substring(1).toLowerCase(Locale.ROOT);
    }
  }

  /** How a cycle takes the lock. */
  enum Style {
    /** {@code lock()} then {@code unlock()}: watchdog-renewed, waits as long as it takes. */
    LOCK,
    /** {@code tryLock(wait, lease)} then {@code unlock()}: an explicit lease, no watchdog. */
    LEASE
  }

  /** How one client thread runs one acquire+release pair, failing loudly if it went wrong. */
  @FunctionalInterface
  interface Cycle {
    void run() throws Exception;
  }

  /** The trivial script of the floor. */
  static final String FLOOR_SCRIPT = "return 1";

  /** The default watchdog lease of both libraries. */
  static final Duration DEFAULT_WATCHDOG_LEASE = Duration.ofSeconds(30);

  /** How long a {@link Style#LEASE} cycle waits at most: never reached in a sound run. */
  private static final Duration WAIT = Duration.ofMinutes(1);

  /** The explicit lease of a {@link Style#LEASE} cycle: never runs out in a run. */
  private static final Duration LEASE = Duration.ofSeconds(30);

  private static final long FLOOR_REPLY_TIMEOUT_SECONDS = 10;

  private final Library library;
  private final List<Latchkey> latchkeys = new ArrayList<>();
  private final List<RedissonClient> redissons = new ArrayList<>();
  private final List<StatefulRedisConnection<String, String>> floorConnections = new ArrayList<>();
  private final List<RedisClient> floorClients = new ArrayList<>();
  private final List<RedisBackend> backends = new ArrayList<>();
  private String floorSha = "";

  private LockClients(Library library) {
    this.library = library;
  }

  /**
   * Opens clients.
   *
   * @param library which library
   * @param count how many clients, each with its own connections
   * @param uri {@code redis://127.0.0.1:PORT}
   * @param watchdogLease the lease that the watchdog keeps renewing (a third of it apart, in both
   *     libraries)
   */
  static LockClients open(Library library, int count, String uri, Duration watchdogLease) {
    LockClients clients = new LockClients(library);
    try {
      for (int i = 0; i < count; i++) {
        switch (library) {
          case FLOOR -> clients.openFloor(uri);
          case SPI ->
              clients.backends.add(
                  RedisBackend.open(
                      URI.create(uri),
                      new BackendContext("bench-spi-" + i, Duration.ofSeconds(5), watchdogLease)));
          case LATCHKEY ->
              clients.latchkeys.add(
                  Latchkey.connect(
                      uri,
                      LatchkeyOptions.builder()
                          .leaseTime(watchdogLease)
                          .closeOnShutdown(false)
                          .build()));
          case REDISSON -> {
            Config config = new Config();
            config.setLockWatchdogTimeout(watchdogLease.toMillis());
            config.useSingleServer().setAddress(uri);
            clients.redissons.add(Redisson.create(config));
          }
        }
      }
      return clients;
    } catch (RuntimeException e) {
      clients.close();
      throw e;
    }
  }

  private void openFloor(String uri) {
    RedisClient client = RedisClient.create();
    floorClients.add(client);
    StatefulRedisConnection<String, String> connection =
        client.connect(StringCodec.UTF8, RedisURI.create(uri));
    floorConnections.add(connection);
    floorSha = connection.sync().scriptLoad(FLOOR_SCRIPT);
  }

  /** Returns how many clients are open. */
  int size() {
    return Math.max(
        Math.max(latchkeys.size(), backends.size()),
        Math.max(redissons.size(), floorConnections.size()));
  }

  /** Returns the latchkey clients (empty for the other libraries). */
  List<Latchkey> latchkeys() {
    return latchkeys;
  }

  /** Returns the Redisson clients (empty for the other libraries). */
  List<RedissonClient> redissons() {
    return redissons;
  }

  /**
   * The cycle one thread repeats on one lock.
   *
   * @param client which client (0 to {@link #size()} - 1)
   * @param name the lock name
   * @param owner a name for the thread, the floor's script argument
   * @param style how to take the lock; the floor ignores it
   */
  Cycle cycle(int client, String name, String owner, Style style) {
    return switch (library) {
      case FLOOR -> floorCycle(floorConnections.get(client).async(), name, owner);
      case SPI -> spiCycle(backends.get(client).locks(), name, owner);
      case LATCHKEY -> latchkeyCycle(latchkeys.get(client).lock(name), style);
      case REDISSON -> redissonCycle(redissons.get(client).getLock(name), style);
    };
  }

  private Cycle floorCycle(RedisAsyncCommands<String, String> commands, String name, String owner) {
    String sha = floorSha;
    String[] keys = {name};
    return () -> {
      Long first =
          commands
              .<Long>evalsha(sha, ScriptOutputType.INTEGER, keys, owner)
              .get(FLOOR_REPLY_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      Long second =
          commands
              .<Long>evalsha(sha, ScriptOutputType.INTEGER, keys, owner)
              .get(FLOOR_REPLY_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      if (first != 1L || second != 1L) {
        throw new IllegalStateException("the floor script answered " + first + ", " + second);
      }
    };
  }

  /**
   * One acquire+release pair on a backend's store called directly, with the requests the engine
   * would send and no engine; a busy lock is retried at once.
   */
  static Cycle spiCycle(LockStore locks, String name, String owner) {
    LockRequest request = request(name, owner);
    return () -> {
      AcquireResult granted = locks.tryAcquire(request).toCompletableFuture().join();
      while (!granted.isGranted()) {
        Thread.onSpinWait();
        granted = locks.tryAcquire(request).toCompletableFuture().join();
      }
      release(locks, name, owner, granted.fencingToken());
    };
  }

  /** The engine's request for an exclusive hold with the watchdog lease. */
  static LockRequest request(String name, String owner) {
    return new LockRequest(
        name,
        owner,
        LockMode.EXCLUSIVE,
        DEFAULT_WATCHDOG_LEASE.toMillis(),
        false,
        LatchkeyOptions.defaults().queueKeepAlive().toMillis());
  }

  /** Releases the exclusive hold {@link #request} was granted, failing if it was not held. */
  static void release(LockStore locks, String name, String owner, long fencingToken) {
    GrantRef grant = new GrantRef(new HolderRef(ResourceType.LOCK, name, owner), fencingToken);
    ReleaseResult released = locks.release(grant, LockMode.EXCLUSIVE).toCompletableFuture().join();
    if (!released.wasHeld()) {
      throw new IllegalStateException("the backend lost the hold of " + owner);
    }
  }

  private static Cycle latchkeyCycle(DistributedLock lock, Style style) {
    if (style == Style.LOCK) {
      return () -> {
        lock.lock();
        lock.unlock();
      };
    }
    return () -> {
      if (!lock.tryLock(WAIT, LEASE)) {
        throw new IllegalStateException("latchkey did not grant " + lock.name() + " in " + WAIT);
      }
      lock.unlock();
    };
  }

  private static Cycle redissonCycle(RLock lock, Style style) {
    if (style == Style.LOCK) {
      return () -> {
        lock.lock();
        lock.unlock();
      };
    }
    return () -> {
      if (!lock.tryLock(WAIT.toMillis(), LEASE.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("Redisson did not grant " + lock.getName() + " in " + WAIT);
      }
      lock.unlock();
    };
  }

  @Override
  public void close() {
    latchkeys.forEach(Latchkey::close);
    backends.forEach(RedisBackend::close);
    redissons.forEach(RedissonClient::shutdown);
    floorConnections.forEach(StatefulRedisConnection::close);
    floorClients.forEach(RedisClient::shutdown);
  }
}
