package io.latchkey.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LeasedSemaphore;
import io.latchkey.LockTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The examples of docs/primitives/leased-semaphore.md. */
class LeasedSemaphoreExamplesTest {
  private static final String URI = "memory:docs-leased-semaphore";

  private static final LatchkeyOptions SHORT_LEASES =
      LatchkeyOptions.builder()
          .leaseTime(Duration.ofMillis(300))
          .renewInterval(Duration.ofMillis(100))
          .build();

  private final Latchkey latchkey = Latchkey.connect(URI, SHORT_LEASES);
  private final Latchkey other = Latchkey.connect(URI, SHORT_LEASES);

  @AfterEach
  void close() {
    latchkey.close();
    other.close();
  }

  @Test
  void usage() throws Exception {
    Journal renders = new Journal();
    // tag::usage[]
    LeasedSemaphore renderers = latchkey.leasedSemaphore("renderers");
    renderers.trySetPermits(2); // sets it once; false if it was set before

    try (Lease permit = renderers.acquire(Duration.ofSeconds(5))) { // renewed by the watchdog
      renders.write("frame 1", permit.fencingToken());
    }
    // end::usage[]
    assertThat(renders.entries()).containsExactly("frame 1");
    assertThat(renderers.availablePermits()).isEqualTo(2);
  }

  @Test
  void watchdogKeepsAPermit() throws Exception {
    LeasedSemaphore renderers = latchkey.leasedSemaphore("renderers/watchdog");
    renderers.trySetPermits(1);
    Lease permit = renderers.acquire(Duration.ZERO);
    await()
        .during(Duration.ofSeconds(1))
        .atMost(Duration.ofSeconds(3))
        .until(() -> other.leasedSemaphore("renderers/watchdog").availablePermits() == 0);
    permit.release();
    assertThat(renderers.availablePermits()).isEqualTo(1);
  }

  @Test
  void anExpiredPermitReturns() throws Exception {
    // tag::expiry[]
    LeasedSemaphore renderers = latchkey.leasedSemaphore("renderers/expiry");
    renderers.trySetPermits(1);
    Optional<Lease> permit = renderers.tryAcquire(Duration.ofMillis(200)); // no watchdog
    assertThat(permit).isPresent();
    assertThat(renderers.availablePermits()).isZero();

    // The holder never releases it (it hung, or crashed): after 200 ms the permit is free again.
    await().atMost(Duration.ofSeconds(2)).until(() -> renderers.availablePermits() == 1);
    Lease next = other.leasedSemaphore("renderers/expiry").acquire(Duration.ofSeconds(1));
    assertThat(next.fencingToken()).isGreaterThan(permit.get().fencingToken());
    assertThatThrownBy(permit.get()::release).isInstanceOf(LeaseLostException.class);
    // end::expiry[]
    next.release();
  }

  @Test
  void releaseByIdFromAnotherProcess() throws Exception {
    // tag::by-id[]
    LeasedSemaphore renderers = latchkey.leasedSemaphore("renderers/by-id");
    renderers.trySetPermits(1);
    Lease permit = renderers.acquire(Duration.ZERO, Duration.ofMinutes(5));
    String permitId = permit.holderId(); // e.g. stored with the job it belongs to

    // Another process finishes the job and gives the permit back.
    assertThat(other.leasedSemaphore("renderers/by-id").release(permitId)).isTrue();
    assertThat(renderers.availablePermits()).isEqualTo(1);
    assertThat(other.leasedSemaphore("renderers/by-id").release(permitId)).isFalse(); // once
    // end::by-id[]
  }

  @Test
  void closingTheClientReturnsItsPermits() throws Exception {
    // tag::close[]
    LeasedSemaphore renderers = latchkey.leasedSemaphore("renderers/close");
    renderers.trySetPermits(1);
    try (Latchkey worker = Latchkey.connect("memory:docs-leased-semaphore")) {
      worker.leasedSemaphore("renderers/close").acquire(Duration.ZERO);
      assertThat(renderers.availablePermits()).isZero();
    } // close() releases the permits this client holds
    assertThat(renderers.availablePermits()).isEqualTo(1);
    // end::close[]
  }

  @Test
  void timeout() throws Exception {
    LeasedSemaphore renderers = latchkey.leasedSemaphore("renderers/timeout");
    renderers.trySetPermits(1);
    Lease permit = renderers.acquire(Duration.ZERO);
    assertThatThrownBy(
            () -> other.leasedSemaphore("renderers/timeout").acquire(Duration.ofMillis(100)))
        .isInstanceOf(LockTimeoutException.class);
    permit.release();
  }

  @Test
  void releasingByIdAndByLeaseIsTwoReleases() throws Exception {
    // tag::id-and-lease[]
    LeasedSemaphore renderers = latchkey.leasedSemaphore("renderers/twice");
    renderers.trySetPermits(1);
    Lease permit = renderers.acquire(Duration.ZERO);
    assertThat(renderers.release(permit.holderId())).isTrue();
    assertThatThrownBy(permit::release) // released by id already: not a loss, a second release
        .isInstanceOf(IllegalStateException.class);
    // end::id-and-lease[]
  }

  @Test
  void severalPermitsAtOnce() throws Exception {
    // tag::batch[]
    LeasedSemaphore renderers = latchkey.leasedSemaphore("renderers/batch");
    renderers.trySetPermits(4);
    List<Lease> permits = renderers.acquire(3, Duration.ofSeconds(5)); // all three, or none
    assertThat(renderers.availablePermits()).isEqualTo(1);
    assertThat(renderers.acquiredPermits()).isEqualTo(3); // granted to any client
    assertThat(renderers.heldPermits()).hasSize(3); // held by this client: ids and leases

    List<String> ids = permits.stream().map(Lease::holderId).toList();
    assertThat(other.leasedSemaphore("renderers/batch").release(ids)).isTrue(); // all, or none
    assertThat(renderers.availablePermits()).isEqualTo(4);
    // end::batch[]
  }

  @Test
  void updateLeaseTime() throws Exception {
    // tag::update-lease[]
    LeasedSemaphore renderers = latchkey.leasedSemaphore("renderers/update");
    renderers.trySetPermits(1);
    Lease permit = renderers.acquire(Duration.ZERO, Duration.ofSeconds(1));
    // The job takes longer than planned: give the permit a new lease, counted from now.
    assertThat(renderers.updateLeaseTime(permit.holderId(), Duration.ofMinutes(5))).isTrue();
    assertThat(permit.remaining()).isGreaterThan(Duration.ofMinutes(4));
    permit.release();
    // end::update-lease[]
  }

  @Test
  void trueCountAndCleanUp() throws Exception {
    // tag::count-and-delete[]
    LeasedSemaphore renderers = latchkey.leasedSemaphore("renderers/count");
    renderers.trySetPermits(10);
    renderers.addPermits(5);
    renderers.addPermits(-10);
    renderers.addPermits(-10);
    assertThat(renderers.availablePermits()).isEqualTo(-5); // as the plain semaphore reports it

    renderers.addPermits(6);
    Lease permit = renderers.acquire(); // no bound on the wait; interruptible
    permit.release();
    assertThat(renderers.delete()).isTrue(); // total and permits gone
    assertThat(renderers.isExists()).isFalse();
    // end::count-and-delete[]
  }
}
