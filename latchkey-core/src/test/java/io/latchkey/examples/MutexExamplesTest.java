package io.latchkey.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedMutex;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LockTimeoutException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The examples of docs/primitives/mutex.md. */
class MutexExamplesTest {
  private static final String URI = "memory:docs-mutex";

  private final Latchkey latchkey = Latchkey.connect(URI);
  private final Latchkey other = Latchkey.connect(URI);

  @AfterEach
  void close() {
    latchkey.close();
    other.close();
  }

  @Test
  void usage() throws Exception {
    Journal customers = new Journal();
    // tag::usage[]
    DistributedMutex mutex = latchkey.mutex("imports/customers");
    try (Lease lease = mutex.acquire(Duration.ofSeconds(5))) {
      customers.write("imported customers.csv", lease.fencingToken());
    }
    // end::usage[]
    assertThat(customers.entries()).containsExactly("imported customers.csv");
    assertThat(mutex.isLocked()).isFalse();
  }

  @Test
  void notReentrant() throws Exception {
    // tag::not-reentrant[]
    DistributedMutex mutex = latchkey.mutex("imports/orders");
    Lease lease = mutex.acquire(Duration.ZERO);
    Optional<Lease> again = mutex.tryAcquire(); // the same thread: refused, not re-entered
    assertThat(again).isEmpty();
    assertThatThrownBy(() -> mutex.acquire(Duration.ofMillis(50)))
        .isInstanceOf(LockTimeoutException.class); // a blocking acquire would wait for itself
    lease.release();
    // end::not-reentrant[]
  }

  @Test
  void releasedOnAnotherThread() throws Exception {
    // tag::other-thread[]
    DistributedMutex mutex = latchkey.mutex("imports/invoices");
    Lease lease = mutex.acquire(Duration.ZERO);
    CompletableFuture.runAsync(lease::release).get(5, TimeUnit.SECONDS);
    assertThat(mutex.isLocked()).isFalse();
    // end::other-thread[]
  }

  @Test
  void sharesItsNameWithTheLock() throws Exception {
    // tag::same-name[]
    Lease lease = latchkey.mutex("imports/products").acquire(Duration.ZERO);
    assertThat(other.lock("imports/products").tryLock()).isFalse(); // same name, same record
    assertThat(latchkey.lock("imports/products").tryLock()).isFalse(); // even on this thread
    lease.release();
    // end::same-name[]
  }

  @Test
  void eachAcquireIsAnOwnerOfItsOwn() throws Exception {
    Lease lease = latchkey.mutex("imports/stock").acquire(Duration.ZERO);
    assertThat(lease.holderId()).startsWith("tok-");
    assertThat(latchkey.admin().inspect("imports/stock").orElseThrow().holders())
        .singleElement()
        .satisfies(holder -> assertThat(holder.owner()).isEqualTo(lease.holderId()));
    lease.release();
  }
}
