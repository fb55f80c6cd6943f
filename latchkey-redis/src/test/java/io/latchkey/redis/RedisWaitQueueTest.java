package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.servers.RedisTestServer;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.AdminStore;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ResourceType;
import io.lettuce.core.RedisClient;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The wait queue of a lock, at the level of the backend SPI, with the wake-ups as they travel on
 * the lock's channel: every waiter queues, fair or not; a release wakes only the head; nobody
 * waits, nothing is published.
 */
class RedisWaitQueueTest {
  private static final RedisKeys KEYS = new RedisKeys(RedisConnectionSettings.DEFAULT_PREFIX);
  private static final long LEASE = 60_000;
  private static final long KEEP_ALIVE = 10_000;

  private @Nullable RedisTestServer server;
  private @Nullable RedisBackend backend;
  private @Nullable RedisClient listenerClient;
  private final List<String> published = new CopyOnWriteArrayList<>();
  private final String name = "queue/" + System.nanoTime();

  @BeforeEach
  void start() {
    RedisTestServer redis = RedisTestServer.start();
    server = redis;
    backend =
        RedisBackend.open(
            URI.create(redis.uri()),
            new BackendContext("queue-test", Duration.ofSeconds(2), Duration.ofMinutes(1)));
    RedisClient client = RedisClient.create(redis.uri());
    listenerClient = client;
    StatefulRedisPubSubConnection<String, String> listener = client.connectPubSub();
    listener.addListener(
        new RedisPubSubAdapter<>() {
          @Override
          public void message(String channel, String message) {
            published.add(message);
          }
        });
    listener.sync().subscribe(KEYS.wakeups(ResourceType.LOCK, name));
  }

  @AfterEach
  void stop() {
    if (listenerClient != null) {
      listenerClient.shutdown();
    }
    if (backend != null) {
      backend.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private LockStore locks() {
    if (backend == null) {
      throw new IllegalStateException("not started");
    }
    return backend.locks();
  }

  private AdminStore admin() {
    if (backend == null) {
      throw new IllegalStateException("not started");
    }
    return backend.admin();
  }

  private static <T> T join(CompletionStage<T> stage) {
    return stage.toCompletableFuture().join();
  }

  private AcquireResult acquire(String owner, LockMode mode, boolean fair, long keepAlive) {
    return join(locks().tryAcquire(new LockRequest(name, owner, mode, LEASE, fair, keepAlive)));
  }

  private int queued() {
    return join(admin().inspect(name)).map(LockInfo::queuedWaiters).orElse(-1);
  }

  private long publishes() {
    if (server == null) {
      throw new IllegalStateException("not started");
    }
    String entry = server.info("commandstats").get("cmdstat_publish");
    return entry == null
        ? 0
        : Long.parseLong(entry.substring("calls=".length(), entry.indexOf(',')));
  }

  @Test
  void everyWaiterQueuesAndAReleaseWakesOnlyTheHead() {
    assertThat(acquire("holder", LockMode.EXCLUSIVE, false, 0).isGranted()).isTrue();
    assertThat(acquire("try-only", LockMode.EXCLUSIVE, false, 0).isGranted()).isFalse();
    assertThat(acquire("first", LockMode.EXCLUSIVE, false, KEEP_ALIVE).isGranted()).isFalse();
    assertThat(acquire("second", LockMode.EXCLUSIVE, true, KEEP_ALIVE).isGranted()).isFalse();
    // A retry keeps its place.
    assertThat(acquire("first", LockMode.EXCLUSIVE, false, KEEP_ALIVE).isGranted()).isFalse();
    assertThat(queued()).as("a try that will not wait does not queue").isEqualTo(2);

    join(locks().release(anyGrant(name, "holder"), LockMode.EXCLUSIVE));
    await().atMost(Duration.ofSeconds(5)).until(() -> published.equals(List.of("1 first")));

    assertThat(acquire("first", LockMode.EXCLUSIVE, false, KEEP_ALIVE).isGranted()).isTrue();
    assertThat(queued()).as("a grant leaves the queue").isEqualTo(1);
    join(locks().release(anyGrant(name, "first"), LockMode.EXCLUSIVE));
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> published.equals(List.of("1 first", "1 second")));
  }

  @Test
  void nobodyQueuedNothingPublished() {
    assertThat(acquire("holder", LockMode.EXCLUSIVE, false, 0).isGranted()).isTrue();
    assertThat(acquire("waiter", LockMode.EXCLUSIVE, false, KEEP_ALIVE).isGranted()).isFalse();
    join(locks().leaveQueue(name, "waiter"));
    long before = publishes();

    join(locks().release(anyGrant(name, "holder"), LockMode.EXCLUSIVE));

    assertThat(publishes()).isEqualTo(before);
    assertThat(queued()).isEqualTo(-1);
  }

  @Test
  void aQueuedReaderThatEntersWakesTheNextWaiter() {
    assertThat(acquire("writer", LockMode.EXCLUSIVE, false, 0).isGranted()).isTrue();
    assertThat(acquire("reader-1", LockMode.SHARED, false, KEEP_ALIVE).isGranted()).isFalse();
    assertThat(acquire("reader-2", LockMode.SHARED, false, KEEP_ALIVE).isGranted()).isFalse();

    join(locks().release(anyGrant(name, "writer"), LockMode.EXCLUSIVE));
    assertThat(acquire("reader-1", LockMode.SHARED, false, KEEP_ALIVE).isGranted()).isTrue();

    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> published.equals(List.of("1 reader-1", "1 reader-2")));
  }

  @Test
  void aQueuedWriterHoldsBackReadersThatCameAfterIt() {
    assertThat(acquire("writer", LockMode.EXCLUSIVE, false, 0).isGranted()).isTrue();
    assertThat(acquire("early-reader", LockMode.SHARED, false, KEEP_ALIVE).isGranted()).isFalse();
    assertThat(acquire("waiting-writer", LockMode.EXCLUSIVE, false, KEEP_ALIVE).isGranted())
        .isFalse();
    assertThat(acquire("late-reader", LockMode.SHARED, false, KEEP_ALIVE).isGranted()).isFalse();

    join(locks().release(anyGrant(name, "writer"), LockMode.EXCLUSIVE));
    assertThat(acquire("early-reader", LockMode.SHARED, false, KEEP_ALIVE).isGranted())
        .as("it came before the waiting writer")
        .isTrue();
    AcquireResult late = acquire("late-reader", LockMode.SHARED, false, KEEP_ALIVE);
    assertThat(late.isGranted()).as("it came after the waiting writer").isFalse();
    assertThat(late.retryAfterMillis()).as("when the writer's place runs out").isPositive();
    assertThat(acquire("new-reader", LockMode.SHARED, false, 0).isGranted()).isFalse();
    assertThat(acquire("early-reader", LockMode.SHARED, false, 0).isGranted())
        .as("a holder re-enters")
        .isTrue();
    assertThat(queued()).isEqualTo(2);

    join(locks().leaveQueue(name, "waiting-writer"));
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> published.equals(List.of("1 early-reader", "1 late-reader")));
    assertThat(acquire("late-reader", LockMode.SHARED, false, KEEP_ALIVE).isGranted()).isTrue();
    assertThat(acquire("new-reader", LockMode.SHARED, false, 0).isGranted()).isTrue();
  }

  @Test
  void aQueuedReaderThatEntersDoesNotWakeAWriter() {
    assertThat(acquire("writer", LockMode.EXCLUSIVE, false, 0).isGranted()).isTrue();
    assertThat(acquire("reader", LockMode.SHARED, false, KEEP_ALIVE).isGranted()).isFalse();
    assertThat(acquire("next-writer", LockMode.EXCLUSIVE, false, KEEP_ALIVE).isGranted()).isFalse();

    join(locks().release(anyGrant(name, "writer"), LockMode.EXCLUSIVE));
    await().atMost(Duration.ofSeconds(5)).until(() -> published.equals(List.of("1 reader")));
    long before = publishes();
    assertThat(acquire("reader", LockMode.SHARED, false, KEEP_ALIVE).isGranted()).isTrue();
    assertThat(publishes()).as("the writer could not enter beside the reader").isEqualTo(before);

    join(locks().release(anyGrant(name, "reader"), LockMode.SHARED));
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> published.equals(List.of("1 reader", "1 next-writer")));
  }

  @Test
  void anOwnerIsNotHeldBackByItsOwnWriterPlace() {
    assertThat(acquire("holder", LockMode.SHARED, false, 0).isGranted()).isTrue();
    assertThat(acquire("token-owner", LockMode.EXCLUSIVE, false, KEEP_ALIVE).isGranted()).isFalse();
    assertThat(acquire("reader", LockMode.SHARED, false, 0).isGranted()).isFalse();
    // The same owner (a token shared by two calls) now asks for the read side: its place is kept
    // and no longer holds readers back.
    assertThat(acquire("token-owner", LockMode.SHARED, false, KEEP_ALIVE).isGranted()).isTrue();
    assertThat(acquire("reader", LockMode.SHARED, false, 0).isGranted()).isTrue();
  }

  @Test
  void aHeadThatLeavesPassesTheWakeUpOnUnlessAWriterHolds() {
    assertThat(acquire("writer", LockMode.EXCLUSIVE, false, 0).isGranted()).isTrue();
    assertThat(acquire("a", LockMode.EXCLUSIVE, false, KEEP_ALIVE).isGranted()).isFalse();
    assertThat(acquire("b", LockMode.EXCLUSIVE, false, KEEP_ALIVE).isGranted()).isFalse();
    assertThat(acquire("c", LockMode.EXCLUSIVE, false, KEEP_ALIVE).isGranted()).isFalse();
    long before = publishes();

    join(locks().leaveQueue(name, "a"));
    assertThat(publishes()).as("the writer still holds the lock").isEqualTo(before);

    join(locks().release(anyGrant(name, "writer"), LockMode.EXCLUSIVE));
    join(locks().leaveQueue(name, "b"));
    await().atMost(Duration.ofSeconds(5)).until(() -> published.equals(List.of("1 b", "1 c")));
  }

  @Test
  void anEvictedWriterWakesTheHead() {
    assertThat(acquire("writer", LockMode.EXCLUSIVE, false, 0).isGranted()).isTrue();
    assertThat(acquire("waiter", LockMode.EXCLUSIVE, false, KEEP_ALIVE).isGranted()).isFalse();

    assertThat(join(admin().evict(name, "writer"))).isTrue();

    await().atMost(Duration.ofSeconds(5)).until(() -> published.equals(List.of("1 waiter")));
  }

  private static GrantRef anyGrant(String name, String owner) {
    return new GrantRef(new HolderRef(ResourceType.LOCK, name, owner), GrantRef.ANY_TOKEN);
  }
}
