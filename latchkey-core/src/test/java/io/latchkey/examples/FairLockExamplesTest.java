package io.latchkey.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LockInfo;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The examples of docs/primitives/fair-lock.md. */
class FairLockExamplesTest {
  private static final String URI = "memory:docs-fair-lock";

  private final Latchkey latchkey = Latchkey.connect(URI);
  private final Latchkey first = Latchkey.connect(URI);
  private final Latchkey second = Latchkey.connect(URI);

  @AfterEach
  void close() {
    latchkey.close();
    first.close();
    second.close();
  }

  private int queued(String name) {
    return latchkey.admin().inspect(name).map(LockInfo::queuedWaiters).orElse(0);
  }

  @Test
  void usage() throws Exception {
    Journal printer = new Journal();
    // tag::usage[]
    DistributedLock lock = latchkey.fairLock("printers/3rd-floor");
    try (Lease lease = lock.acquire(Duration.ofSeconds(5))) {
      printer.write("quarterly-report.pdf", lease.fencingToken());
    }
    // end::usage[]
    assertThat(printer.entries()).containsExactly("quarterly-report.pdf");
    assertThat(lock.isLocked()).isFalse();
  }

  @Test
  void waitersAreServedInArrivalOrder() throws Exception {
    String name = "printers/2nd-floor";
    // tag::order[]
    Lease held = latchkey.fairLock(name).acquire(Duration.ZERO);

    CompletableFuture<Lease> one =
        first.fairLock(name).acquireAsync(Duration.ofSeconds(10)).toCompletableFuture();
    await().until(() -> queued(name) == 1); // `first` is queued
    CompletableFuture<Lease> two =
        second.fairLock(name).acquireAsync(Duration.ofSeconds(10)).toCompletableFuture();
    await().until(() -> queued(name) == 2); // `second` is queued behind it

    held.release();
    Lease firstLease = one.get(5, TimeUnit.SECONDS); // the first to arrive is served first
    assertThat(two).isNotDone();
    firstLease.release();
    two.get(5, TimeUnit.SECONDS).release();
    // end::order[]
  }

  @Test
  void aDeadWaiterDropsOutOfTheQueue() throws Exception {
    String name = "printers/basement";
    LatchkeyOptions options =
        LatchkeyOptions.builder().queueKeepAlive(Duration.ofSeconds(1)).build();
    Latchkey crashing = Latchkey.connect(URI, options);
    // tag::dead-waiter[]
    Lease held = latchkey.fairLock(name).acquire(Duration.ZERO);
    crashing.fairLock(name).acquireAsync(Duration.ofSeconds(30)); // queued first ...
    await().until(() -> queued(name) == 1);
    CompletableFuture<Lease> next =
        first.fairLock(name).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
    await().until(() -> queued(name) == 2);

    crashing.close(); // ... and its process dies: it stops renewing its place

    held.release();
    // It missed its turn after one hand-off (1 s by default); then `first` is served.
    next.get(10, TimeUnit.SECONDS).release();
    // end::dead-waiter[]
  }

  @Test
  void aPlainLockDoesNotQueue() throws Exception {
    String name = "printers/roof";
    Latchkey crashing = Latchkey.connect(URI); // queueKeepAlive: 5 s by default
    Lease held = latchkey.fairLock(name).acquire(Duration.ZERO);
    crashing.fairLock(name).acquireAsync(Duration.ofSeconds(30));
    await().until(() -> queued(name) == 1);
    crashing.close();
    held.release();
    // tag::plain-overtakes[]
    // The lock is free, but it is kept for the dead waiter that the release woke, for one
    // hand-off (1 s by default):
    assertThat(first.fairLock(name).tryLock()).isFalse(); // a fair request waits its turn
    assertThat(first.lock(name).tryLock()).isFalse(); // and so does a plain one, meanwhile
    // Then the dead waiter has missed its turn and loses its place; the lock is anyone's.
    await().pollInSameThread().until(() -> first.lock(name).tryLock());
    // end::plain-overtakes[]
    first.lock(name).unlock();
  }
}
