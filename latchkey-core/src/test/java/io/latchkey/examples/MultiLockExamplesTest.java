package io.latchkey.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LockTimeoutException;
import io.latchkey.MultiLease;
import io.latchkey.MultiLock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The examples of docs/primitives/multi-lock.md. */
class MultiLockExamplesTest {
  private static final String URI = "memory:docs-multi-lock";

  private final Latchkey latchkey = Latchkey.connect(URI);
  private final Latchkey other = Latchkey.connect(URI);

  @AfterEach
  void close() {
    latchkey.close();
    other.close();
  }

  @Test
  void usage() throws Exception {
    Bank bank = new Bank(Map.of("alice", 100, "bob", 0));
    // tag::usage[]
    DistributedLock alice = latchkey.lock("accounts/alice");
    DistributedLock bob = latchkey.lock("accounts/bob");
    MultiLock both = MultiLock.of(alice, bob); // or latchkey.multiLock(alice, bob)

    MultiLease lease = both.acquire(Duration.ofSeconds(5)); // all or none
    try {
      bank.transfer("alice", "bob", 30); // nobody else touches either account meanwhile
    } finally {
      lease.release(); // releases every member (MultiLease is also AutoCloseable)
    }
    // end::usage[]
    assertThat(bank.balance("alice")).isEqualTo(70);
    assertThat(bank.balance("bob")).isEqualTo(30);
    assertThat(alice.isLocked() || bob.isLocked()).isFalse();
  }

  @Test
  void oneGlobalOrder() throws Exception {
    // tag::order[]
    DistributedLock alice = latchkey.lock("accounts/alice");
    DistributedLock bob = latchkey.lock("accounts/bob");
    assertThat(MultiLock.of(bob, alice).members()).containsExactly(alice, bob);
    // end::order[]
  }

  @Test
  void oppositeTransfersDoNotDeadlock() throws Exception {
    Bank bank = new Bank(Map.of("carol", 1000, "dave", 1000));
    // tag::no-deadlock[]
    // Two processes transfer in opposite directions, naming the accounts in opposite order.
    ExecutorService processes = Executors.newFixedThreadPool(2);
    Future<?> carolToDave =
        processes.submit(
            () -> {
              transfers(latchkey, bank, "carol", "dave", 100);
              return null;
            });
    Future<?> daveToCarol =
        processes.submit(
            () -> {
              transfers(other, bank, "dave", "carol", 100);
              return null;
            });
    carolToDave.get(30, TimeUnit.SECONDS); // both finish: no deadlock
    daveToCarol.get(30, TimeUnit.SECONDS);
    // end::no-deadlock[]
    processes.shutdown();
    assertThat(bank.balance("carol")).isEqualTo(1000);
    assertThat(bank.balance("dave")).isEqualTo(1000);
  }

  // tag::transfers[]
  static void transfers(Latchkey latchkey, Bank bank, String from, String to, int times)
      throws InterruptedException {
    MultiLock both =
        MultiLock.of(latchkey.lock("accounts/" + from), latchkey.lock("accounts/" + to));
    for (int i = 0; i < times; i++) {
      MultiLease lease = both.acquire(Duration.ofSeconds(10));
      try {
        bank.transfer(from, to, 1);
      } finally {
        lease.release();
      }
    }
  }

  // end::transfers[]

  @Test
  void allOrNone() throws Exception {
    // tag::all-or-none[]
    DistributedLock alice = latchkey.lock("accounts/alice");
    DistributedLock bob = latchkey.lock("accounts/bob");
    Lease bobElsewhere = other.lock("accounts/bob").acquire(Duration.ZERO);

    assertThat(MultiLock.of(alice, bob).tryAcquire()).isEmpty();
    assertThatThrownBy(() -> MultiLock.of(alice, bob).acquire(Duration.ofMillis(100)))
        .isInstanceOf(LockTimeoutException.class);
    assertThat(alice.isLocked()).isFalse(); // alice was taken, then given back
    // end::all-or-none[]
    bobElsewhere.release();
  }

  @Test
  void earlierMembersAreHeldWhileWaiting() throws Exception {
    // tag::held-while-waiting[]
    Lease bobElsewhere = other.lock("accounts/bob").acquire(Duration.ZERO);
    CompletableFuture<MultiLease> waiting =
        MultiLock.of(latchkey.lock("accounts/alice"), latchkey.lock("accounts/bob"))
            .acquireAsync(Duration.ofSeconds(10))
            .toCompletableFuture();
    // alice comes first in the order: it is taken and held while the multi-lock waits for bob.
    await().until(() -> other.lock("accounts/alice").isLocked());
    assertThat(other.lock("accounts/alice").tryLock()).isFalse();

    bobElsewhere.release();
    waiting.get(5, TimeUnit.SECONDS).release();
    // end::held-while-waiting[]
    assertThat(other.lock("accounts/alice").isLocked()).isFalse();
  }

  @Test
  void acrossBackends() throws Exception {
    // tag::across-backends[]
    try (Latchkey payments = Latchkey.connect("memory:docs-payments");
        Latchkey shipping = Latchkey.connect("memory:docs-shipping")) {
      MultiLock order =
          MultiLock.of(payments.lock("orders/42/payment"), shipping.lock("orders/42/parcel"));
      try (MultiLease lease = order.acquire(Duration.ofSeconds(5))) {
        assertThat(lease.leases()).hasSize(2);
        assertThat(lease.isValid()).isTrue();
      }
    }
    // end::across-backends[]
  }

  @Test
  void aLockTwiceIsRefused() {
    DistributedLock alice = latchkey.lock("accounts/alice");
    assertThatThrownBy(() -> MultiLock.of(alice, other.lock("accounts/alice")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("appears twice");
  }

  /** Test support: accounts whose transfers are unsafe without the lock. */
  static final class Bank {
    private final Map<String, Integer> balances;

    Bank(Map<String, Integer> balances) {
      this.balances = new HashMap<>(balances);
    }

    void transfer(String from, String to, int amount) {
      int fromBalance = balance(from);
      int toBalance = balance(to);
      Thread.yield();
      synchronized (balances) {
        balances.put(from, fromBalance - amount);
        balances.put(to, toBalance + amount);
      }
    }

    int balance(String account) {
      synchronized (balances) {
        return balances.get(account);
      }
    }
  }
}
