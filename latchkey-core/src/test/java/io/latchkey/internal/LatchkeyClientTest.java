package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseListener;
import io.latchkey.LeaseLostException;
import io.latchkey.memory.MemoryLockServer;
import io.latchkey.spi.GrantEvents;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The engine's own behaviour on the in-memory backend; the conformance kit covers the rest. */
class LatchkeyClientTest {
  private final MemoryLockServer server = new MemoryLockServer();
  private final LatchkeyOptions options =
      LatchkeyOptions.builder()
          .leaseTime(Duration.ofMillis(300))
          .renewInterval(Duration.ofMillis(100))
          .recheckInterval(Duration.ofSeconds(30))
          .closeOnShutdown(false)
          .build();
  private final Latchkey a = Latchkey.using(server.backend(), options);
  private final Latchkey b = Latchkey.using(server.backend(), options);

  @AfterEach
  void close() {
    a.close();
    b.close();
  }

  @Test
  void watchdogKeepsTheLockPastItsLease() {
    DistributedLock lock = a.lock("w");
    lock.lock();
    await()
        .during(Duration.ofMillis(900))
        .atMost(Duration.ofSeconds(3))
        .until(() -> !b.lock("w").tryLock());
    lock.unlock();
    assertThat(b.lock("w").tryLock()).isTrue();
  }

  @Test
  void releaseWakesAWaiterWithoutWaitingForTheRecheck() throws Exception {
    DistributedLock lock = a.lock("wake");
    lock.lock();
    CompletableFuture<Lease> waiting =
        b.lock("wake").acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    await().pollDelay(Duration.ofMillis(100)).until(() -> !waiting.isDone());
    lock.unlock();
    Lease lease = waiting.get(5, TimeUnit.SECONDS);
    assertThat(lease.isValid()).isTrue();
    lease.release();
  }

  @Test
  void forceReleaseIsReportedAsLeaseLoss() throws Exception {
    Lease lease = a.lock("lost").acquire(Duration.ZERO);
    AtomicReference<LeaseLostException> heard = new AtomicReference<>();
    lease.onLost(heard::set);
    assertThat(b.admin().forceRelease("lost")).isTrue();
    await().atMost(Duration.ofSeconds(3)).until(() -> heard.get() != null);
    assertThat(lease.isValid()).isFalse();
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void cancelledAcquisitionLeavesNothingHeld() throws Exception {
    DistributedLock lock = a.lock("cancel");
    lock.lock();
    CompletableFuture<Lease> waiting =
        b.lock("cancel").acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    waiting.cancel(false);
    lock.unlock();
    await().atMost(Duration.ofSeconds(3)).until(() -> a.lock("cancel").tryLock());
  }

  /**
   * Events from the backend reach the lease and its listeners: suspended makes it invalid at once,
   * resumed makes it valid again only after the backend confirmed the same grant, and a grant the
   * backend no longer has when resumed is lost.
   */
  @Test
  void suspensionAndResumptionReachTheLeaseAndItsListeners() throws Exception {
    AtomicReference<GrantEvents> events = new AtomicReference<>();
    Latchkey client =
        Latchkey.using(
            context -> {
              events.set(context.events());
              return server.backend().open(context);
            },
            // A confirmed watchdog renewal would resume a suspended grant too: keep it out.
            LatchkeyOptions.builder().closeOnShutdown(false).build());
    try {
      Lease kept = client.lock("events/kept").acquire(Duration.ZERO);
      Lease dropped = client.lock("events/dropped").acquire(Duration.ZERO);
      List<String> heard = new CopyOnWriteArrayList<>();
      kept.addListener(recorder("kept", heard));
      dropped.addListener(recorder("dropped", heard));

      Objects.requireNonNull(events.get()).allSuspended("connection reset");
      assertThat(kept.isValid()).isFalse();
      assertThat(dropped.isValid()).isFalse();
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> heard.containsAll(List.of("kept suspended", "dropped suspended")));

      b.admin().forceRelease("events/dropped");
      Objects.requireNonNull(events.get()).allResumed();
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> heard.containsAll(List.of("kept resumed", "dropped lost")));
      assertThat(kept.isValid()).isTrue();
      assertThat(dropped.isValid()).isFalse();
      assertThat(heard).doesNotContain("kept lost", "dropped resumed");
      assertThatThrownBy(dropped::release).isInstanceOf(LeaseLostException.class);
      kept.release();
    } finally {
      client.close();
    }
  }

  private static LeaseListener recorder(String name, List<String> heard) {
    return new LeaseListener() {
      @Override
      public void suspended(String reason) {
        heard.add(name + " suspended");
      }

      @Override
      public void resumed() {
        heard.add(name + " resumed");
      }

      @Override
      public void lost(LeaseLostException reason) {
        heard.add(name + " lost");
      }
    };
  }
}
