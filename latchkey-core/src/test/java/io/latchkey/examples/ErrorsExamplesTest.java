package io.latchkey.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.BackendTimeoutException;
import io.latchkey.BackendUnavailableException;
import io.latchkey.DistributedLock;
import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyException;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LockTimeoutException;
import io.latchkey.LockUpgradeException;
import io.latchkey.OwnerToken;
import io.latchkey.UnsupportedFeatureException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The examples of docs/errors.md. */
class ErrorsExamplesTest {
  private static final LatchkeyOptions OPTIONS =
      LatchkeyOptions.builder()
          .operationTimeout(Duration.ofMillis(200)) // default 5 s
          .closeOnShutdown(false)
          .build();

  private final FaultyBackend backend = new FaultyBackend();
  private final Latchkey latchkey = Latchkey.using(backend, OPTIONS);
  private final Latchkey other = Latchkey.using(backend, OPTIONS);

  @AfterEach
  void close() {
    backend.fault(FaultyBackend.Fault.NONE);
    latchkey.close();
    other.close();
  }

  // tag::handling[]
  static String ship(DistributedLock lock, LongConsumer shipping) throws InterruptedException {
    try (Lease lease = lock.acquire(Duration.ofSeconds(1))) {
      shipping.accept(lease.fencingToken()); // writes carry the token
      return "shipped";
    } catch (LockTimeoutException busy) {
      return "busy: someone else is shipping it";
    } catch (LeaseLostException lost) {
      return "lost the lock while shipping: check what was written";
    } catch (BackendUnavailableException down) { // includes BackendTimeoutException
      return "lock service unavailable: fail, or retry with back-off";
    }
  }

  // end::handling[]

  @Test
  void hierarchy() {
    assertThat(LatchkeyException.class).isAssignableFrom(LockTimeoutException.class);
    assertThat(LatchkeyException.class).isAssignableFrom(LeaseLostException.class);
    assertThat(LatchkeyException.class).isAssignableFrom(BackendUnavailableException.class);
    assertThat(BackendUnavailableException.class).isAssignableFrom(BackendTimeoutException.class);
    assertThat(LatchkeyException.class).isAssignableFrom(LockUpgradeException.class);
    assertThat(RuntimeException.class).isAssignableFrom(LatchkeyException.class);
    assertThat(UnsupportedOperationException.class)
        .isAssignableFrom(UnsupportedFeatureException.class);
    assertThat(LatchkeyException.class.isAssignableFrom(UnsupportedFeatureException.class))
        .isFalse();
  }

  @Test
  void shipped() throws Exception {
    Journal journal = new Journal();
    assertThat(ship(latchkey.lock("orders/1"), token -> journal.write("shipped", token)))
        .isEqualTo("shipped");
    assertThat(journal.entries()).containsExactly("shipped");
  }

  @Test
  void busy() throws Exception {
    Lease heldElsewhere = other.lock("orders/2").acquire(Duration.ZERO);
    assertThat(ship(latchkey.lock("orders/2"), token -> {}))
        .isEqualTo("busy: someone else is shipping it");
    heldElsewhere.release();
  }

  @Test
  void lost() throws Exception {
    // An administrator frees the lock while it is being shipped.
    assertThat(ship(latchkey.lock("orders/3"), token -> other.admin().forceRelease("orders/3")))
        .isEqualTo("lost the lock while shipping: check what was written");
  }

  @Test
  void backendDown() throws Exception {
    backend.fault(FaultyBackend.Fault.FAIL); // connection refused
    assertThat(ship(latchkey.lock("orders/4"), token -> {}))
        .isEqualTo("lock service unavailable: fail, or retry with back-off");
  }

  @Test
  void backendHangs() throws Exception {
    backend.fault(FaultyBackend.Fault.HANG); // no answer at all
    long start = System.nanoTime();
    assertThat(ship(latchkey.lock("orders/5"), token -> {}))
        .isEqualTo("lock service unavailable: fail, or retry with back-off");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
  }

  @Test
  void timeoutNamesTheBackendAndOperation() throws Exception {
    backend.fault(FaultyBackend.Fault.HANG);
    // tag::backend-timeout[]
    assertThatThrownBy(() -> latchkey.lock("orders/6").acquire(Duration.ofSeconds(1)))
        .isInstanceOf(BackendTimeoutException.class)
        .hasMessage("faulty-memory did not answer 'acquire lock 'orders/6'' within PT0.2S");
    // end::backend-timeout[]
  }

  @Test
  void aFailedUnlockLeavesTheLeaseToRunOut() throws Exception {
    // tag::failed-release[]
    DistributedLock lock = latchkey.lock("orders/7");
    lock.lock(Duration.ofMillis(300)); // or a watchdog lease: the same happens at its lease time
    backend.fault(FaultyBackend.Fault.FAIL);
    assertThatThrownBy(lock::unlock).isInstanceOf(BackendUnavailableException.class);
    assertThat(lock.holdCount()).isZero(); // forgotten here, no longer renewed
    backend.fault(FaultyBackend.Fault.NONE); // the backend is back

    // The backend still holds the lock until its lease runs out; then anyone can take it.
    assertThat(other.lock("orders/7").tryLock()).isFalse();
    await().atMost(Duration.ofSeconds(5)).until(() -> other.lock("orders/7").tryLock());
    // end::failed-release[]
  }

  @Test
  void unsupportedFeature() {
    FaultyBackend locksOnly = new FaultyBackend(EnumSet.of(Feature.WAKEUP_PUSH));
    try (Latchkey latchkey = Latchkey.using(locksOnly, OPTIONS)) {
      // tag::unsupported[]
      assertThatThrownBy(() -> latchkey.semaphore("partner-api/calls"))
          .isInstanceOfSatisfying(
              UnsupportedFeatureException.class,
              e -> assertThat(e.feature()).isEqualTo(Feature.SEMAPHORE));

      // Ask first where a fallback exists:
      DistributedLock printer =
          latchkey.features().contains(Feature.FAIR_LOCK)
              ? latchkey.fairLock("printers/1")
              : latchkey.lock("printers/1");
      // end::unsupported[]
      assertThat(printer.tryLock()).isTrue();
      printer.unlock();
    }
  }

  @Test
  void foreignUnlock() throws Exception {
    // tag::foreign-unlock[]
    DistributedLock lock = latchkey.lock("orders/8");
    assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class); // not held

    OwnerToken stranger = OwnerToken.random();
    lock.lock();
    assertThatThrownBy(() -> lock.withOwner(stranger).unlock()) // held, but by someone else
        .isInstanceOf(IllegalMonitorStateException.class);
    assertThatThrownBy(() -> CompletableFuture.runAsync(lock::unlock).join()) // another thread
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(IllegalMonitorStateException.class);
    lock.unlock();
    // end::foreign-unlock[]
  }

  @Test
  void badInput() {
    // tag::bad-input[]
    assertThatThrownBy(() -> latchkey.lock(" "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("lock name must not be blank");
    assertThatThrownBy(() -> latchkey.lock("orders/9").acquire(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("wait must not be negative, was PT-1S");
    assertThatThrownBy(() -> latchkey.lock("orders/9").acquire(Duration.ZERO, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("leaseTime must be at least 1 ms, was PT0S");
    assertThatThrownBy(() -> OwnerToken.parse("alice"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("not an owner token");
    assertThatThrownBy(() -> Latchkey.connect("nosuch://localhost"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no latchkey backend on the class path takes 'nosuch:' URIs");
    // end::bad-input[]
  }

  @Test
  void misuse() throws Exception {
    // tag::misuse[]
    Lease lease = latchkey.lock("orders/10").acquire(Duration.ZERO);
    lease.release();
    assertThatThrownBy(lease::release).isInstanceOf(IllegalStateException.class); // twice

    Latchkey closed = Latchkey.using(backend, OPTIONS);
    DistributedLock lock = closed.lock("orders/10");
    closed.close();
    assertThatThrownBy(lock::lock)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("this latchkey client is closed");
    // end::misuse[]
  }
}
