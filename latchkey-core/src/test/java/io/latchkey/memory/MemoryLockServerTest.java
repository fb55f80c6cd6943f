package io.latchkey.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockMode;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.ResourceType;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The reference backend's lease arithmetic on a manual clock: expiry, re-entry never shortening a
 * lease, fair-queue deadlines, fencing, and batch renewal.
 */
class MemoryLockServerTest {
  private final ManualTicker clock = new ManualTicker();
  private final MemoryLockServer server = new MemoryLockServer(clock);
  private final LatchkeyBackend a = open("a");
  private final LatchkeyBackend b = open("b");

  private LatchkeyBackend open(String client) {
    return server
        .backend()
        .open(new BackendContext(client, Duration.ofSeconds(1), Duration.ofSeconds(30)));
  }

  private static AcquireResult acquire(LatchkeyBackend backend, LockRequest request) {
    return backend.locks().tryAcquire(request).toCompletableFuture().join();
  }

  private static LockRequest exclusive(String owner, long leaseMillis) {
    return new LockRequest("x", owner, LockMode.EXCLUSIVE, leaseMillis, false, 0);
  }

  private static LockRequest fair(String owner) {
    return new LockRequest("x", owner, LockMode.EXCLUSIVE, 1000, true, 500);
  }

  @Test
  void leaseExpiresByTheServerClock() {
    assertThat(acquire(a, exclusive("a:1", 1000)).isGranted()).isTrue();
    AcquireResult busy = acquire(b, exclusive("b:1", 1000));
    assertThat(busy.isGranted()).isFalse();
    assertThat(busy.retryAfterMillis()).isEqualTo(1000);
    clock.advance(Duration.ofMillis(999));
    assertThat(acquire(b, exclusive("b:1", 1000)).isGranted()).isFalse();
    clock.advance(Duration.ofMillis(1));
    assertThat(acquire(b, exclusive("b:1", 1000)).isGranted()).isTrue();
  }

  @Test
  void reentryNeverShortensTheLease() {
    acquire(a, exclusive("a:1", 10_000));
    AcquireResult again = acquire(a, exclusive("a:1", 100));
    assertThat(again.holds()).isEqualTo(2);
    clock.advance(Duration.ofSeconds(5));
    assertThat(acquire(b, exclusive("b:1", 1000)).isGranted()).isFalse();
  }

  @Test
  void fencingTokensGrowAcrossExpiryAndKeepOnReentry() {
    long first = acquire(a, exclusive("a:1", 100)).fencingToken();
    assertThat(acquire(a, exclusive("a:1", 100)).fencingToken()).isEqualTo(first);
    clock.advance(Duration.ofMillis(100));
    long second = acquire(b, exclusive("b:1", 100)).fencingToken();
    assertThat(second).isGreaterThan(first);
  }

  @Test
  void fairQueueServesArrivalOrderAndDropsDeadWaiters() {
    acquire(a, fair("a:1"));
    assertThat(acquire(b, fair("b:1")).isGranted()).isFalse();
    assertThat(acquire(b, fair("b:2")).isGranted()).isFalse();
    a.locks().release(anyGrant("x", "a:1"), LockMode.EXCLUSIVE);
    // b:2 arrived second, so it must wait for b:1 even though the lock is free.
    assertThat(acquire(b, fair("b:2")).isGranted()).isFalse();
    // b:1 stops renewing its place; after the keep-alive it drops out and b:2 is served.
    clock.advance(Duration.ofMillis(400));
    assertThat(acquire(b, fair("b:2")).isGranted()).isFalse();
    clock.advance(Duration.ofMillis(200));
    assertThat(acquire(b, fair("b:2")).isGranted()).isTrue();
  }

  @Test
  void renewReportsHoldersThatAreGone() {
    long token = acquire(a, exclusive("a:1", 100)).fencingToken();
    GrantRef held = new GrantRef(new HolderRef(ResourceType.LOCK, "x", "a:1"), token);
    GrantRef never = new GrantRef(new HolderRef(ResourceType.LOCK, "y", "a:1"), token);
    GrantRef otherGrant = new GrantRef(held.holder(), token + 1);
    assertThat(a.renew(List.of(held, never, otherGrant), 1000).toCompletableFuture().join().gone())
        .containsExactlyInAnyOrder(never, otherGrant);
    clock.advance(Duration.ofMillis(900));
    assertThat(acquire(b, exclusive("b:1", 100)).isGranted()).isFalse();
    clock.advance(Duration.ofMillis(100));
    assertThat(a.renew(List.of(held), 1000).toCompletableFuture().join().gone())
        .containsExactly(held);
  }

  @Test
  void releaseOfAnotherGrantOfTheSameOwnerChangesNothing() {
    long token = acquire(a, exclusive("a:1", 1000)).fencingToken();
    GrantRef stale = new GrantRef(new HolderRef(ResourceType.LOCK, "x", "a:1"), token + 1);
    assertThat(a.locks().release(stale, LockMode.EXCLUSIVE).toCompletableFuture().join().wasHeld())
        .isFalse();
    assertThat(acquire(b, exclusive("b:1", 1000)).isGranted()).isFalse();
    GrantRef current = new GrantRef(stale.holder(), token);
    assertThat(
            a.locks().release(current, LockMode.EXCLUSIVE).toCompletableFuture().join().wasHeld())
        .isTrue();
  }

  private static GrantRef anyGrant(String name, String owner) {
    return new GrantRef(new HolderRef(ResourceType.LOCK, name, owner), GrantRef.ANY_TOKEN);
  }

  @Test
  void readersShareAndUpgradeIsRefused() {
    LockRequest readA = new LockRequest("x", "a:1", LockMode.SHARED, 1000, false, 0);
    LockRequest readB = new LockRequest("x", "b:1", LockMode.SHARED, 1000, false, 0);
    assertThat(acquire(a, readA).isGranted()).isTrue();
    assertThat(acquire(b, readB).isGranted()).isTrue();
    assertThat(acquire(a, exclusive("a:1", 1000)).status())
        .isEqualTo(AcquireResult.Status.UPGRADE_REFUSED);
  }

  @Test
  void aWaitingWriterHoldsBackNewReadersUntilItsPlaceEnds() {
    assertThat(acquire(a, read("a:1", 0)).isGranted()).isTrue();
    assertThat(acquire(b, read("b:early", 500)).isGranted()).isTrue();
    LockRequest writer = new LockRequest("x", "b:w", LockMode.EXCLUSIVE, 1000, false, 500);
    assertThat(acquire(b, writer).isGranted()).isFalse();

    AcquireResult heldBack = acquire(b, read("b:late", 500));
    assertThat(heldBack.isGranted()).isFalse();
    assertThat(heldBack.retryAfterMillis()).as("when the writer's place ends").isEqualTo(500);
    assertThat(acquire(a, read("a:1", 0)).isGranted()).as("a holder re-enters").isTrue();

    // The writer stops renewing its place: readers enter once it ends, not before.
    clock.advance(Duration.ofMillis(499));
    assertThat(acquire(b, read("b:late", 500)).isGranted()).isFalse();
    clock.advance(Duration.ofMillis(1));
    assertThat(acquire(b, read("b:late", 500)).isGranted()).isTrue();
    assertThat(acquire(b, read("b:new", 0)).isGranted()).isTrue();
  }

  private static LockRequest read(String owner, long queueKeepAliveMillis) {
    return new LockRequest("x", owner, LockMode.SHARED, 10_000, false, queueKeepAliveMillis);
  }

  @Test
  void releaseWakesOnlyTheHeadOfTheWaitQueue() throws Exception {
    java.util.concurrent.BlockingQueue<io.latchkey.spi.Wakeup> heard =
        new java.util.concurrent.LinkedBlockingQueue<>();
    b.wakeups().subscribe(ResourceType.LOCK, "x", heard::add).toCompletableFuture().join();
    acquire(a, exclusive("a:1", 1000));
    LockRequest waitsFirst = new LockRequest("x", "b:1", LockMode.EXCLUSIVE, 1000, false, 500);
    LockRequest waitsSecond = new LockRequest("x", "b:2", LockMode.EXCLUSIVE, 1000, false, 500);
    assertThat(acquire(b, waitsFirst).isGranted()).isFalse();
    assertThat(acquire(b, waitsSecond).isGranted()).isFalse();
    a.locks().release(anyGrant("x", "a:1"), LockMode.EXCLUSIVE);
    assertThat(heard.poll(5, java.util.concurrent.TimeUnit.SECONDS))
        .isEqualTo(io.latchkey.spi.Wakeup.forOwner("b:1"));
    // The free lock is kept for the woken head during its hand-off: a barger is refused.
    assertThat(acquire(a, exclusive("a:9", 1000)).isGranted()).isFalse();
    assertThat(acquire(b, waitsFirst).isGranted()).isTrue();
    // A try that does not wait is not queued, so it is never woken.
    assertThat(acquire(b, exclusive("b:3", 1000)).isGranted()).isFalse();
    assertThat(a.admin().inspect("x").toCompletableFuture().join().orElseThrow().queuedWaiters())
        .isEqualTo(1);
    assertThat(heard.poll(200, java.util.concurrent.TimeUnit.MILLISECONDS)).isNull();
  }

  @Test
  void aWokenHeadThatDoesNotComeMissesItsTurnAfterTheHandoff() throws Exception {
    java.util.concurrent.BlockingQueue<io.latchkey.spi.Wakeup> heard =
        new java.util.concurrent.LinkedBlockingQueue<>();
    b.wakeups().subscribe(ResourceType.LOCK, "x", heard::add).toCompletableFuture().join();
    acquire(a, exclusive("a:1", 1000));
    LockRequest paused = new LockRequest("x", "b:1", LockMode.EXCLUSIVE, 1000, false, 5000, 300);
    LockRequest live = new LockRequest("x", "b:2", LockMode.EXCLUSIVE, 1000, false, 5000, 300);
    LockRequest barger = new LockRequest("x", "a:9", LockMode.EXCLUSIVE, 1000, false, 0, 300);
    acquire(b, paused);
    acquire(b, live);
    a.locks().release(anyGrant("x", "a:1"), LockMode.EXCLUSIVE);
    assertThat(heard.poll(5, java.util.concurrent.TimeUnit.SECONDS))
        .isEqualTo(io.latchkey.spi.Wakeup.forOwner("b:1"));

    clock.advance(Duration.ofMillis(299));
    AcquireResult kept = acquire(a, barger);
    assertThat(kept.isGranted()).isFalse();
    assertThat(kept.retryAfterMillis()).as("when the hand-off ends").isEqualTo(1);

    clock.advance(Duration.ofMillis(1));
    AcquireResult passedOn = acquire(a, barger);
    assertThat(passedOn.isGranted()).as("kept for the next waiter now").isFalse();
    assertThat(passedOn.retryAfterMillis()).isEqualTo(300);
    assertThat(heard.poll(5, java.util.concurrent.TimeUnit.SECONDS))
        .isEqualTo(io.latchkey.spi.Wakeup.forOwner("b:2"));
    assertThat(acquire(b, live).isGranted()).isTrue();
    assertThat(a.admin().inspect("x").toCompletableFuture().join().orElseThrow().queuedWaiters())
        .as("the head that missed its turn lost its place")
        .isZero();
    assertThat(acquire(b, paused).isGranted()).as("it comes back: queued again").isFalse();
  }

  @Test
  void aClosedServerRefusesEveryOperationAndForgetsItsName() {
    MemoryLockServer named = MemoryLockServer.named("closing-" + System.nanoTime());
    String name = named.description().substring("memory:".length());
    LatchkeyBackend backend =
        named
            .backend()
            .open(new BackendContext("c", Duration.ofSeconds(1), Duration.ofSeconds(30)));
    assertThat(acquire(backend, exclusive("c:1", 1000)).isGranted()).isTrue();

    named.close();

    assertThat(named.isClosed()).isTrue();
    assertThat(backend.locks().tryAcquire(exclusive("c:1", 1000)).toCompletableFuture())
        .failsWithin(Duration.ofSeconds(1))
        .withThrowableOfType(java.util.concurrent.ExecutionException.class)
        .withMessageContaining("is closed");
    MemoryLockServer fresh = MemoryLockServer.named(name);
    assertThat(fresh).isNotSameAs(named);
    fresh.close();
    named.close();
  }
}
