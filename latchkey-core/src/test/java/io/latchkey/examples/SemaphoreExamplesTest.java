package io.latchkey.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedSemaphore;
import io.latchkey.Latchkey;
import io.latchkey.LockTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The examples of docs/primitives/semaphore.md. */
class SemaphoreExamplesTest {
  private static final String URI = "memory:docs-semaphore";

  private final Latchkey latchkey = Latchkey.connect(URI);
  private final Latchkey other = Latchkey.connect(URI);

  @AfterEach
  void close() {
    latchkey.close();
    other.close();
  }

  @Test
  void usage() throws Exception {
    Journal partnerApi = new Journal();
    // tag::usage[]
    DistributedSemaphore calls = latchkey.semaphore("partner-api/calls");
    calls.trySetPermits(3); // sets it once; false if it was set before

    if (calls.tryAcquire(1, Duration.ofSeconds(1))) {
      try {
        partnerApi.write("GET /rates"); // at most 3 of these run at once, in all processes
      } finally {
        calls.release(1);
      }
    }
    // end::usage[]
    assertThat(partnerApi.entries()).containsExactly("GET /rates");
    assertThat(calls.availablePermits()).isEqualTo(3);
  }

  @Test
  void setOnce() {
    // tag::set-once[]
    DistributedSemaphore slots = latchkey.semaphore("render/slots");
    assertThat(slots.availablePermits()).isZero(); // never set: no permits
    assertThat(slots.trySetPermits(2)).isTrue();
    assertThat(other.semaphore("render/slots").trySetPermits(5)).isFalse(); // already set
    slots.addPermits(3); // change the number later, unconditionally
    assertThat(slots.availablePermits()).isEqualTo(5);
    // end::set-once[]
  }

  @Test
  void waiting() throws Exception {
    // tag::waiting[]
    DistributedSemaphore slots = latchkey.semaphore("render/gpu");
    slots.trySetPermits(2);
    assertThat(slots.tryAcquire(2)).isTrue(); // both taken, no waiting

    assertThatThrownBy(() -> slots.acquire(1, Duration.ofMillis(100)))
        .isInstanceOf(LockTimeoutException.class); // none free within 100 ms

    CompletableFuture<Void> waiter =
        other.semaphore("render/gpu").acquireAsync(1, Duration.ofSeconds(10)).toCompletableFuture();
    slots.release(1); // wakes the waiter
    waiter.get(5, TimeUnit.SECONDS);
    assertThat(slots.availablePermits()).isZero();
    // end::waiting[]
  }

  @Test
  void permitsHaveNoOwner() {
    // tag::no-owner[]
    DistributedSemaphore slots = latchkey.semaphore("render/cpu");
    slots.trySetPermits(1);
    assertThat(slots.tryAcquire(1)).isTrue();
    other.semaphore("render/cpu").release(1); // anyone may release ...
    other.semaphore("render/cpu").release(1); // ... even permits nobody took
    assertThat(slots.availablePermits()).isEqualTo(2); // now there are two
    // end::no-owner[]
  }

  @Test
  void aCrashedHolderKeepsItsPermits() {
    // tag::crash[]
    DistributedSemaphore slots = latchkey.semaphore("render/disk");
    slots.trySetPermits(1);
    try (Latchkey crashing = Latchkey.connect("memory:docs-semaphore")) {
      assertThat(crashing.semaphore("render/disk").tryAcquire(1)).isTrue();
    } // the holder goes away without releasing (closing the client does not release it either)
    assertThat(slots.availablePermits()).isZero(); // lost until someone calls release(1)
    // end::crash[]
  }

  @Test
  void negativeDelta() {
    // tag::negative[]
    DistributedSemaphore slots = latchkey.semaphore("render/net");
    slots.trySetPermits(2);
    assertThat(slots.tryAcquire(2)).isTrue();
    slots.addPermits(-1); // shrink the pool while both permits are out
    assertThat(slots.availablePermits()).isEqualTo(-1);
    slots.release(2);
    assertThat(slots.availablePermits()).isEqualTo(1);
    // end::negative[]
  }

  @Test
  void drainSetAndCleanUp() throws Exception {
    // tag::drain-set-delete[]
    DistributedSemaphore slots = latchkey.semaphore("import/slots");
    slots.setPermits(4); // sets the number whatever it was (trySetPermits only sets it once)
    slots.acquire(1); // waits as long as it takes; interruptible
    assertThat(slots.drainPermits()).isEqualTo(3); // takes every available permit at once

    slots.delete(); // the clean-up: the record is gone ...
    assertThat(slots.isExists()).isFalse();
    assertThat(slots.releaseIfExists(1)).isFalse(); // ... and a late release does not bring it back
    assertThat(slots.isExists()).isFalse();
    // end::drain-set-delete[]
  }
}
