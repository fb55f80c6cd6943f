package io.latchkey.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockMode;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendContext;
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
    a.locks().release("x", "a:1", LockMode.EXCLUSIVE);
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
    acquire(a, exclusive("a:1", 100));
    HolderRef held = new HolderRef(ResourceType.LOCK, "x", "a:1");
    HolderRef never = new HolderRef(ResourceType.LOCK, "y", "a:1");
    assertThat(a.renew(List.of(held, never), 1000).toCompletableFuture().join())
        .containsExactly(never);
    clock.advance(Duration.ofMillis(900));
    assertThat(acquire(b, exclusive("b:1", 100)).isGranted()).isFalse();
    clock.advance(Duration.ofMillis(100));
    assertThat(a.renew(List.of(held), 1000).toCompletableFuture().join()).containsExactly(held);
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
  void releaseWakesOnlyTheHeadOfTheWaitQueue() throws Exception {
    java.util.concurrent.BlockingQueue<io.latchkey.spi.Wakeup> heard =
        new java.util.concurrent.LinkedBlockingQueue<>();
    b.wakeups().subscribe(ResourceType.LOCK, "x", heard::add).toCompletableFuture().join();
    acquire(a, exclusive("a:1", 1000));
    LockRequest waitsFirst = new LockRequest("x", "b:1", LockMode.EXCLUSIVE, 1000, false, 500);
    LockRequest waitsSecond = new LockRequest("x", "b:2", LockMode.EXCLUSIVE, 1000, false, 500);
    assertThat(acquire(b, waitsFirst).isGranted()).isFalse();
    assertThat(acquire(b, waitsSecond).isGranted()).isFalse();
    a.locks().release("x", "a:1", LockMode.EXCLUSIVE);
    assertThat(heard.poll(5, java.util.concurrent.TimeUnit.SECONDS))
        .isEqualTo(io.latchkey.spi.Wakeup.forOwner("b:1"));
    // A try that does not wait is not queued, so it is never woken.
    assertThat(acquire(a, exclusive("a:9", 1000)).isGranted()).isTrue();
    assertThat(acquire(b, exclusive("b:3", 1000)).isGranted()).isFalse();
    assertThat(a.locks().inspect("x").toCompletableFuture().join().orElseThrow().queuedWaiters())
        .isEqualTo(2);
  }
}
