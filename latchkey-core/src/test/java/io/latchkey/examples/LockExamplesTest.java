package io.latchkey.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LockTimeoutException;
import io.latchkey.OwnerToken;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The examples of docs/primitives/lock.md. */
class LockExamplesTest {
  private static final String URI = "memory:docs-lock";

  /** Short leases so that the time-based examples run in about a second. */
  private static final LatchkeyOptions SHORT_LEASES =
      LatchkeyOptions.builder()
          .leaseTime(Duration.ofMillis(300))
          .renewInterval(Duration.ofMillis(100))
          .build();

  private final Latchkey latchkey = Latchkey.connect(URI);
  private final Latchkey other = Latchkey.connect(URI);

  @AfterEach
  void close() {
    latchkey.close();
    other.close();
  }

  // ---- Lock style ----

  // tag::buy[]
  static boolean buy(DistributedLock lock, Stock stock) {
    lock.lock(); // waits as long as it takes
    try {
      return stock.sell(); // an unsynchronised read-modify-write, made safe by the lock
    } finally {
      lock.unlock();
    }
  }

  // end::buy[]

  @Test
  void flashSaleDoesNotOversell() throws Exception {
    Stock stock = new Stock(200);
    ExecutorService buyers = Executors.newFixedThreadPool(8);
    try {
      List<Future<Integer>> sold = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        // Two clients stand for two processes; each pool thread is an owner of its own.
        Latchkey client = i % 2 == 0 ? latchkey : other;
        sold.add(
            buyers.submit(
                () -> {
                  DistributedLock lock = client.lock("stock/sku-1");
                  int count = 0;
                  while (buy(lock, stock)) {
                    count++;
                  }
                  return count;
                }));
      }
      int total = 0;
      for (Future<Integer> f : sold) {
        total += f.get(30, TimeUnit.SECONDS);
      }
      assertThat(total).isEqualTo(200);
      assertThat(stock.left()).isZero();
    } finally {
      buyers.shutdownNow();
    }
  }

  @Test
  void tryLockWithAWait() throws Exception {
    Lease heldElsewhere = other.lock("stock/sku-2").acquire(Duration.ZERO);
    Journal journal = new Journal();
    // tag::try-lock[]
    DistributedLock lock = latchkey.lock("stock/sku-2");
    if (lock.tryLock(Duration.ofMillis(100))) {
      try {
        journal.write("sku-2 restocked");
      } finally {
        lock.unlock();
      }
    } else {
      // another owner held it for the whole 100 ms: skip, retry later, or report "busy"
    }
    // end::try-lock[]
    assertThat(journal.entries()).isEmpty();
    heldElsewhere.release();
    assertThat(lock.tryLock()).isTrue();
    lock.unlock();
  }

  @Test
  void reentry() {
    // tag::reentry[]
    DistributedLock lock = latchkey.lock("orders/42");
    lock.lock();
    lock.lock(); // the same thread again: a second hold, granted at once
    assertThat(lock.holdCount()).isEqualTo(2);
    lock.unlock();
    assertThat(lock.isHeldByCurrentOwner()).isTrue(); // one hold left
    lock.unlock();
    assertThat(lock.isLocked()).isFalse();
    // end::reentry[]
  }

  // ---- Lease style ----

  @Test
  void leaseStyle() throws Exception {
    Ledger ledger = new Ledger();
    // tag::lease-style[]
    DistributedLock lock = latchkey.lock("orders/42");
    try (Lease lease = lock.acquire(Duration.ofSeconds(3))) { // else LockTimeoutException
      ledger.write("order 42 shipped", lease.fencingToken());
    }
    // end::lease-style[]
    assertThat(ledger.rows()).containsExactly("order 42 shipped");
    assertThat(lock.isLocked()).isFalse();
  }

  @Test
  void leaseReleasedOnAnotherThread() throws Exception {
    DistributedLock lock = latchkey.lock("orders/43");
    // tag::lease-other-thread[]
    Lease lease = lock.acquire(Duration.ofSeconds(3));
    CompletableFuture<Void> work =
        CompletableFuture.runAsync(
            () -> {
              try {
                // ... the work, on a pool thread ...
              } finally {
                lease.release(); // any thread may release a lease
              }
            });
    // end::lease-other-thread[]
    work.get(5, TimeUnit.SECONDS);
    assertThat(lock.isLocked()).isFalse();
  }

  @Test
  void stylesMix() throws Exception {
    // tag::mix[]
    DistributedLock lock = latchkey.lock("orders/44");
    lock.lock();
    try (Lease inner = lock.acquire(Duration.ZERO)) { // a re-entry: never waits for itself
      assertThat(inner.isValid()).isTrue();
      assertThat(lock.holdCount()).isEqualTo(2);
    }
    lock.unlock();
    // end::mix[]
    assertThat(lock.isLocked()).isFalse();
  }

  @Test
  void asyncAcquire() throws Exception {
    Stock stock = new Stock(1);
    // tag::async[]
    DistributedLock lock = latchkey.lock("stock/sku-3");
    CompletionStage<Boolean> sold =
        lock.acquireAsync(Duration.ofSeconds(1)) // the owner is this thread, fixed now
            .thenCompose(
                lease -> {
                  boolean ok = stock.sell(); // runs on whichever thread granted the lock
                  return lease.releaseAsync().thenApply(released -> ok);
                });
    // end::async[]
    assertThat(sold.toCompletableFuture().get(5, TimeUnit.SECONDS)).isTrue();
    assertThat(lock.isLocked()).isFalse();
  }

  // ---- leases and the watchdog ----

  @Test
  void watchdogKeepsTheLeaseAlive() throws Exception {
    // tag::watchdog[]
    LatchkeyOptions options =
        LatchkeyOptions.builder()
            .leaseTime(Duration.ofMillis(300)) // default 30 s
            .renewInterval(Duration.ofMillis(100)) // default: a third of the lease
            .build();
    try (Latchkey a = Latchkey.connect("memory:docs-lock", options);
        Latchkey b = Latchkey.connect("memory:docs-lock", options)) {
      Lease lease = a.lock("reports/daily").acquire(Duration.ZERO); // no lease time: watchdog
      // A second later, more than three leases have passed; the lock is still held.
      await()
          .during(Duration.ofSeconds(1))
          .atMost(Duration.ofSeconds(3))
          .until(() -> b.lock("reports/daily").isLocked());
      assertThat(lease.isValid()).isTrue();
      lease.release(); // the watchdog stops renewing it
    }
    // end::watchdog[]
  }

  @Test
  void explicitLeaseRunsOut() throws Exception {
    try (Latchkey a = Latchkey.connect(URI, SHORT_LEASES);
        Latchkey b = Latchkey.connect(URI, SHORT_LEASES)) {
      // tag::explicit-lease[]
      Lease lease = a.lock("reports/nightly").acquire(Duration.ZERO, Duration.ofMillis(200));
      AtomicReference<LeaseLostException> lost = new AtomicReference<>();
      lease.onLost(lost::set); // runs on the callback executor, may block

      // The work takes longer than 200 ms: nobody renews the lease, it runs out.
      await().atMost(Duration.ofSeconds(2)).until(() -> lost.get() != null);
      assertThat(lease.isValid()).isFalse();
      assertThat(b.lock("reports/nightly").tryLock(Duration.ofSeconds(1))).isTrue();
      assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
      // end::explicit-lease[]
      b.lock("reports/nightly").unlock();
    }
  }

  @Test
  void aReentryWithoutALeaseTimeHandsTheHoldToTheWatchdog() throws Exception {
    try (Latchkey a = Latchkey.connect(URI, SHORT_LEASES);
        Latchkey b = Latchkey.connect(URI, SHORT_LEASES)) {
      DistributedLock lock = a.lock("reports/mixed");
      Lease outer = lock.acquire(Duration.ZERO, Duration.ofMillis(200));
      lock.acquire(Duration.ZERO).release(); // a re-entry without a lease time
      // The outer 200 ms lease is now renewed by the watchdog until the outer release.
      await()
          .during(Duration.ofMillis(600))
          .atMost(Duration.ofSeconds(2))
          .until(() -> b.lock("reports/mixed").isLocked());
      assertThat(outer.isValid()).isTrue();
      outer.release();
      assertThat(b.lock("reports/mixed").isLocked()).isFalse();
    }
  }

  // ---- fencing ----

  // tag::fenced-store[]
  /** A store that refuses writes carrying an older fencing token than one it has accepted. */
  static final class FencedStore {
    private long highestToken;
    private final List<String> rows = new ArrayList<>();

    synchronized void write(String row, long fencingToken) {
      if (fencingToken < highestToken) {
        throw new StaleTokenException(fencingToken, highestToken);
      }
      highestToken = fencingToken; // equal tokens pass: one grant may write many times
      rows.add(row);
    }

    synchronized List<String> rows() {
      return List.copyOf(rows);
    }
  }

  // end::fenced-store[]

  @Test
  void fencingTokenRejectsAStaleWriter() throws Exception {
    try (Latchkey a = Latchkey.connect(URI, SHORT_LEASES);
        Latchkey b = Latchkey.connect(URI, SHORT_LEASES)) {
      // tag::fencing[]
      FencedStore store = new FencedStore();

      // Client A takes the lock for 200 ms, writes, and then stalls (a GC pause, a slow disk).
      Lease leaseA = a.lock("invoices/7").acquire(Duration.ZERO, Duration.ofMillis(200));
      store.write("A: draft", leaseA.fencingToken());

      // A's lease runs out while it stalls; client B gets the lock and writes.
      try (Lease leaseB = b.lock("invoices/7").acquire(Duration.ofSeconds(2))) {
        assertThat(leaseB.fencingToken()).isGreaterThan(leaseA.fencingToken());
        store.write("B: final", leaseB.fencingToken());
      }

      // A wakes up and writes as if it still held the lock: the store refuses the old token.
      assertThatThrownBy(() -> store.write("A: late", leaseA.fencingToken()))
          .isInstanceOf(StaleTokenException.class);
      assertThat(store.rows()).containsExactly("A: draft", "B: final");
      // end::fencing[]
      await().atMost(Duration.ofSeconds(2)).until(() -> !leaseA.isValid());
    }
  }

  @Test
  void reentryKeepsTheToken() throws Exception {
    // tag::token-reentry[]
    DistributedLock lock = latchkey.lock("invoices/8");
    try (Lease outer = lock.acquire(Duration.ZERO);
        Lease inner = lock.acquire(Duration.ZERO)) {
      assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
    }
    // end::token-reentry[]
  }

  // ---- owner tokens ----

  @Test
  void childThreadReentersWithAToken() throws Exception {
    // tag::token-child-thread[]
    OwnerToken owner = latchkey.newOwnerToken();
    DistributedLock cart = latchkey.lock("carts/9").withOwner(owner);
    cart.lock();
    try {
      // A child thread acting for the same owner re-enters instead of waiting for its parent.
      CompletableFuture<Integer> child =
          CompletableFuture.supplyAsync(
              () -> {
                cart.lock();
                try {
                  return cart.holdCount();
                } finally {
                  cart.unlock();
                }
              });
      assertThat(child.get(5, TimeUnit.SECONDS)).isEqualTo(2);

      // The thread-owned view of the same lock belongs to each thread on its own:
      DistributedLock threadOwned = latchkey.lock("carts/9");
      assertThat(CompletableFuture.supplyAsync(threadOwned::tryLock).get(5, TimeUnit.SECONDS))
          .isFalse();
    } finally {
      cart.unlock();
    }
    // end::token-child-thread[]
    assertThat(cart.isLocked()).isFalse();
  }

  // tag::rpc-callee[]
  /** The callee of an RPC, in another process: it re-enters the caller's lock. */
  static final class ShippingService {
    private final Latchkey latchkey;

    ShippingService(Latchkey latchkey) {
      this.latchkey = latchkey;
    }

    long ship(String order, String ownerHeader) throws InterruptedException {
      OwnerToken owner = OwnerToken.parse(ownerHeader); // IllegalArgumentException if malformed
      DistributedLock lock = latchkey.lock("orders/" + order).withOwner(owner);
      try (Lease lease = lock.acquire(Duration.ZERO)) { // a re-entry: granted at once
        // ... ship it ...
        return lease.fencingToken();
      }
    }
  }

  // end::rpc-callee[]

  @Test
  void rpcCalleeReentersTheCallersLock() throws Exception {
    ShippingService shipping = new ShippingService(other); // `other` stands for another process
    // tag::rpc-caller[]
    OwnerToken owner = latchkey.newOwnerToken();
    DistributedLock lock = latchkey.lock("orders/7").withOwner(owner);
    try (Lease lease = lock.acquire(Duration.ofSeconds(1))) {
      String header = owner.value(); // travels with the request, like a trace id
      long calleeToken = shipping.ship("7", header);
      assertThat(calleeToken).isEqualTo(lease.fencingToken()); // the same grant
      assertThat(lease.isValid()).isTrue(); // the callee released only its own hold
    }
    // end::rpc-caller[]
    assertThat(lock.isLocked()).isFalse();
  }

  @Test
  void aCalleeThatReleasesTooMuchTakesTheCallersLock() throws Exception {
    try (Latchkey caller = Latchkey.connect(URI, SHORT_LEASES);
        Latchkey callee = Latchkey.connect(URI, SHORT_LEASES)) {
      // tag::token-foreign-release[]
      OwnerToken owner = caller.newOwnerToken();
      Lease lease = caller.lock("orders/8").withOwner(owner).acquire(Duration.ZERO);

      // A buggy callee unlocks a hold it never took. The token allows it: the lock is free.
      callee.lock("orders/8").withOwner(OwnerToken.parse(owner.value())).unlock();

      // The caller's watchdog finds the lock gone and reports it as a lost lease.
      await().atMost(Duration.ofSeconds(2)).until(() -> !lease.isValid());
      assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
      // end::token-foreign-release[]
    }
  }

  // ---- error handling ----

  @Test
  void timeout() throws Exception {
    Lease heldElsewhere = other.lock("orders/45").acquire(Duration.ZERO);
    Ledger ledger = new Ledger();
    String outcome;
    // tag::timeout[]
    DistributedLock lock = latchkey.lock("orders/45");
    try (Lease lease = lock.acquire(Duration.ofMillis(100))) {
      ledger.write("order 45 shipped", lease.fencingToken());
      outcome = "shipped";
    } catch (LockTimeoutException busy) {
      outcome = "busy, try again later"; // nothing is held
    }
    // end::timeout[]
    assertThat(outcome).isEqualTo("busy, try again later");
    assertThat(ledger.rows()).isEmpty();
    heldElsewhere.release();
  }

  @Test
  void foreignUnlock() throws Exception {
    // tag::foreign-unlock[]
    DistributedLock lock = latchkey.lock("orders/46");
    lock.lock();
    CompletableFuture<Void> fromAnotherThread = CompletableFuture.runAsync(lock::unlock);
    assertThatThrownBy(fromAnotherThread::join)
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(IllegalMonitorStateException.class);
    lock.unlock(); // the owning thread can
    // end::foreign-unlock[]
    assertThat(lock.isLocked()).isFalse();
  }

  @Test
  void leaseLostOnRelease() throws Exception {
    try (Latchkey a = Latchkey.connect(URI, SHORT_LEASES)) {
      Ledger ledger = new Ledger();
      DistributedLock lock = a.lock("orders/47");
      // tag::lost-on-close[]
      try (Lease lease = lock.acquire(Duration.ZERO, Duration.ofMillis(100))) {
        await().atMost(Duration.ofSeconds(2)).until(() -> !lease.isValid()); // slow work
        ledger.write("order 47 shipped", lease.fencingToken());
      } catch (LeaseLostException lost) {
        // The write above was not protected: undo it, or rely on the fencing token to reject it.
        ledger.undoLast();
      }
      // end::lost-on-close[]
      assertThat(ledger.rows()).isEmpty();
    }
  }

  @Test
  void conditionsAreNotSupported() {
    DistributedLock lock = latchkey.lock("orders/48");
    assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
  }

  // ---- test support ----

  /** The resource of the flash-sale example. */
  static final class Stock {
    private int left;

    Stock(int left) {
      this.left = left;
    }

    /** Sells one item if any is left; not thread-safe on purpose. */
    boolean sell() {
      int seen = left;
      if (seen == 0) {
        return false;
      }
      Thread.yield(); // widen the race window that the lock must close
      left = seen - 1;
      return true;
    }

    int left() {
      return left;
    }
  }

  /** A write-only store for the examples. */
  static final class Ledger {
    private final List<String> rows = new ArrayList<>();

    synchronized void write(String row, long fencingToken) {
      rows.add(row);
    }

    synchronized void undoLast() {
      rows.remove(rows.size() - 1);
    }

    synchronized List<String> rows() {
      return List.copyOf(rows);
    }
  }

  /** Thrown by {@link FencedStore} for a write with an old token. */
  static final class StaleTokenException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    StaleTokenException(long token, long highest) {
      super("fencing token " + token + " is older than " + highest);
    }
  }

  @Test
  void cooperativeRevocation() throws Exception {
    Journal exports = new Journal();
    // tag::revocation[]
    Lease lease = latchkey.lock("exports/daily").acquire(Duration.ZERO);
    lease.onRevocationRequested(
        asked -> {
          exports.write("checkpoint before giving up", asked.fencingToken());
          asked.release(); // hand the lock over; ignoring the request keeps it
        });

    // Another process (or `latchkey revoke exports/daily`):
    DistributedLock theirs = other.lock("exports/daily");
    assertThat(theirs.requestRevocation()).isTrue(); // false if nobody held it
    try (Lease taken = theirs.acquire(Duration.ofSeconds(5))) {
      assertThat(taken.fencingToken()).isGreaterThan(lease.fencingToken());
    }
    // end::revocation[]
    assertThat(exports.entries()).containsExactly("checkpoint before giving up");
  }
}
