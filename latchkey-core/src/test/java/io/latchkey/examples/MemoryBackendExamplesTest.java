package io.latchkey.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LockTimeoutException;
import io.latchkey.memory.MemoryLockServer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The examples of docs/backends/memory.md. */
class MemoryBackendExamplesTest {
  @Test
  void uris() {
    // tag::uris[]
    try (Latchkey a = Latchkey.connect("memory:docs-orders");
        Latchkey b = Latchkey.connect("memory:docs-orders");
        Latchkey elsewhere = Latchkey.connect("memory:docs-billing")) {
      assertThat(a.lock("orders/42").tryLock()).isTrue();
      assertThat(b.lock("orders/42").tryLock()).isFalse(); // same server: b contends like a process
      assertThat(elsewhere.lock("orders/42").tryLock()).isTrue(); // another server: independent
      a.lock("orders/42").unlock();
      elsewhere.lock("orders/42").unlock();
    }
    // end::uris[]
  }

  @Test
  void defaultServer() {
    // tag::default[]
    try (Latchkey latchkey = Latchkey.connect("memory:")) { // the same as memory:default
      assertThat(latchkey.backendDescription()).isEqualTo("memory:default");
      assertThat(latchkey.features()) // all but what belongs to sessions and watches
          .doesNotContain(Feature.CONNECTION_BOUND_HOLDS, Feature.WAKEUP_WATCH)
          .hasSize(Feature.values().length - 2);
    }
    // end::default[]
  }

  @Test
  void aServerNameWithASlashIsRefused() {
    assertThatThrownBy(() -> Latchkey.connect("memory:a/b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'memory:' or 'memory:NAME'");
  }

  @Test
  void aServerOfItsOwn() throws Exception {
    // tag::own-server[]
    MemoryLockServer server = new MemoryLockServer(); // shared with nobody else
    LatchkeyOptions options = LatchkeyOptions.builder().closeOnShutdown(false).build();
    try (Latchkey a = Latchkey.using(server.backend(), options);
        Latchkey b = Latchkey.using(server.backend(), options)) {
      Lease lease = a.lock("jobs/sync").acquire(Duration.ZERO);
      assertThat(b.lock("jobs/sync").tryLock()).isFalse();
      lease.release();
    }
    // end::own-server[]
  }

  // tag::nightly-report[]
  /** The code under test: a job that must run in one instance only, at most every 10 minutes. */
  static final class NightlyReport {
    private final DistributedLock lock;
    private int runs;

    NightlyReport(Latchkey latchkey) {
      this.lock = latchkey.lock("reports/nightly");
    }

    /** Runs the report unless another instance ran it less than 10 minutes ago. */
    boolean runIfDue() throws InterruptedException {
      try {
        // Not released on purpose: the lease keeps other instances out for 10 minutes.
        lock.acquire(Duration.ZERO, Duration.ofMinutes(10));
      } catch (LockTimeoutException alreadyRan) {
        return false;
      }
      runs++;
      return true;
    }

    int runs() {
      return runs;
    }
  }

  // end::nightly-report[]

  @Test
  void manualClock() throws Exception {
    // tag::manual-clock[]
    AtomicLong nanos = new AtomicLong(); // the server's clock: it moves when the test says so
    MemoryLockServer server = new MemoryLockServer(nanos::get);
    LatchkeyOptions options = LatchkeyOptions.builder().closeOnShutdown(false).build();
    try (Latchkey instanceA = Latchkey.using(server.backend(), options);
        Latchkey instanceB = Latchkey.using(server.backend(), options)) {
      NightlyReport a = new NightlyReport(instanceA);
      NightlyReport b = new NightlyReport(instanceB);

      assertThat(a.runIfDue()).isTrue();
      assertThat(b.runIfDue()).isFalse(); // A ran it just now

      nanos.addAndGet(Duration.ofMinutes(9).toNanos());
      assertThat(b.runIfDue()).isFalse(); // still within A's 10 minutes

      nanos.addAndGet(Duration.ofMinutes(1).toNanos());
      assertThat(b.runIfDue()).isTrue(); // A's lease ran out on the server's clock
      assertThat(a.runs() + b.runs()).isEqualTo(2);
    }
    // end::manual-clock[]
  }

  @Test
  void pausedProcessLosesItsLease() throws Exception {
    // tag::pause[]
    AtomicLong nanos = new AtomicLong();
    MemoryLockServer server = new MemoryLockServer(nanos::get);
    LatchkeyOptions options =
        LatchkeyOptions.builder()
            .renewInterval(Duration.ofMillis(50)) // the watchdog lease stays 30 s
            .closeOnShutdown(false)
            .build();
    try (Latchkey latchkey = Latchkey.using(server.backend(), options)) {
      Lease lease = latchkey.lock("reports/weekly").acquire(Duration.ZERO);
      AtomicReference<LeaseLostException> lost = new AtomicReference<>();
      lease.onLost(lost::set);

      // 31 s pass on the server between two renewals, as in a long GC pause of the holder.
      nanos.addAndGet(Duration.ofSeconds(31).toNanos());

      await().atMost(Duration.ofSeconds(2)).until(() -> lost.get() != null);
      assertThat(lease.isValid()).isFalse();
    }
    // end::pause[]
  }
}
