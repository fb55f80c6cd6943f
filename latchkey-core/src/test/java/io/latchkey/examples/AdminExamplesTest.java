package io.latchkey.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.ClientInfo;
import io.latchkey.DistributedLock;
import io.latchkey.Feature;
import io.latchkey.HolderInfo;
import io.latchkey.LatchInfo;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LeasedSemaphoreInfo;
import io.latchkey.LockAdmin;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.PermitInfo;
import io.latchkey.SemaphoreInfo;
import io.latchkey.memory.MemoryLockServer;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The examples of docs/primitives/admin.md. */
class AdminExamplesTest {
  /**
   * Renewals every 100 ms, so that a holder hears of a force-release quickly; a 2 s lease, so that
   * a loaded machine whose scheduler stalls for a few hundred milliseconds loses no lease for real.
   */
  private static final LatchkeyOptions OPTIONS =
      LatchkeyOptions.builder()
          .leaseTime(Duration.ofSeconds(2))
          .renewInterval(Duration.ofMillis(100))
          .closeOnShutdown(false)
          .build();

  /** A server of its own, so that list() sees only the locks of this test. */
  private final MemoryLockServer server = new MemoryLockServer();

  private final Latchkey latchkey = Latchkey.using(server.backend(), OPTIONS);
  private final Latchkey worker = Latchkey.using(server.backend(), OPTIONS);

  @AfterEach
  void close() {
    latchkey.close();
    worker.close();
  }

  @Test
  void inspect() throws Exception {
    DistributedLock lock = worker.lock("jobs/import");
    lock.lock();
    lock.lock();
    // tag::inspect[]
    LockAdmin admin = latchkey.admin();
    LockInfo info = admin.inspect("jobs/import").orElseThrow(); // empty if nobody holds it
    HolderInfo holder = info.holders().get(0);

    assertThat(holder.clientId()).isEqualTo(worker.clientId()); // which client (process)
    assertThat(holder.owner()).startsWith(worker.clientId() + ":"); // client id + thread id
    assertThat(holder.mode()).isEqualTo(LockMode.EXCLUSIVE);
    assertThat(holder.holds()).isEqualTo(2); // it re-entered once
    assertThat(holder.remainingLease()).isPositive(); // by the backend's clock
    assertThat(holder.fencingToken()).isPositive();
    assertThat(info.queuedWaiters()).isZero();
    // end::inspect[]
    lock.unlock();
    lock.unlock();
    assertThat(admin.inspect("jobs/import")).isEmpty();
  }

  @Test
  void list() throws Exception {
    worker.lock("jobs/export").lock();
    Lease a = worker.readWriteLock("catalog").readLock().acquire(Duration.ZERO);
    Lease b = latchkey.readWriteLock("catalog").readLock().acquire(Duration.ZERO);
    // tag::list[]
    LockAdmin admin = latchkey.admin();
    if (latchkey.features().contains(Feature.ADMIN)) { // every admin() operation needs it
      for (LockInfo lock : admin.list()) {
        for (HolderInfo holder : lock.holders()) {
          System.out.printf(
              "%s %s by %s, %d hold(s), %d ms left%n",
              lock.name(),
              holder.mode(),
              holder.owner(),
              holder.holds(),
              holder.remainingLease().toMillis());
        }
      }
    }
    // end::list[]
    assertThat(admin.list()).extracting(LockInfo::name).containsExactly("catalog", "jobs/export");
    assertThat(admin.list().get(0).holders())
        .extracting(HolderInfo::mode)
        .containsExactly(LockMode.SHARED, LockMode.SHARED);
    a.release();
    b.release();
    worker.lock("jobs/export").unlock();
  }

  @Test
  void queuedWaiters() throws Exception {
    Lease held = latchkey.fairLock("jobs/fair").acquire(Duration.ZERO);
    CompletableFuture<Lease> waiting =
        worker.fairLock("jobs/fair").acquireAsync(Duration.ofSeconds(10)).toCompletableFuture();
    await().until(() -> latchkey.admin().inspect("jobs/fair").orElseThrow().queuedWaiters() == 1);
    held.release();
    waiting.get(5, TimeUnit.SECONDS).release();
  }

  @Test
  void forceRelease() throws Exception {
    // tag::force-release[]
    Lease lease = worker.lock("jobs/stuck").acquire(Duration.ZERO);
    AtomicReference<LeaseLostException> lost = new AtomicReference<>();
    lease.onLost(lost::set);

    assertThat(latchkey.admin().forceRelease("jobs/stuck")).isTrue(); // whoever holds it
    assertThat(latchkey.lock("jobs/stuck").tryLock()).isTrue(); // free at once

    // The old holder hears of it at its next renewal (every renewInterval), or when it releases.
    await().atMost(Duration.ofSeconds(2)).until(() -> lost.get() != null);
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
    // end::force-release[]
    latchkey.lock("jobs/stuck").unlock();
  }

  @Test
  void anExplicitLeaseHearsOfAForceReleaseOnlyWhenReleasing() throws Exception {
    Lease lease = worker.lock("jobs/explicit").acquire(Duration.ZERO, Duration.ofSeconds(30));
    assertThat(latchkey.admin().forceRelease("jobs/explicit")).isTrue();
    assertThat(lease.isValid()).isTrue(); // nothing renews it, so nothing asks the backend
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void reaper() throws Exception {
    Latchkey monitor = latchkey;
    Latchkey alive = worker;
    alive.lock("jobs/alive").lock();
    leaveOrphanedLock(server, "jobs/orphaned");
    // tag::reaper[]
    LockAdmin admin = monitor.admin();
    Set<String> liveClients =
        admin.clients().stream().map(ClientInfo::clientId).collect(Collectors.toSet());

    for (LockInfo lock : admin.list()) {
      for (HolderInfo holder : lock.holders()) {
        if (!liveClients.contains(holder.clientId())) {
          admin.evict(lock.name(), holder.owner()); // that holder only, never a newer one
        }
      }
    }
    // end::reaper[]
    assertThat(admin.list()).extracting(LockInfo::name).containsExactly("jobs/alive");
    alive.lock("jobs/alive").unlock();
  }

  @Test
  void clients() {
    // tag::clients[]
    for (ClientInfo client : latchkey.admin().clients()) { // needs Feature.PRESENCE
      System.out.printf(
          "%s on %s (pid %d) since %s%n",
          client.clientId(), client.host(), client.pid(), client.startedAt());
    }
    // end::clients[]
    assertThat(latchkey.admin().clients())
        .extracting(ClientInfo::clientId)
        .containsExactlyInAnyOrder(latchkey.clientId(), worker.clientId());
    assertThat(latchkey.admin().clients())
        .allSatisfy(c -> assertThat(c.pid()).isEqualTo(ProcessHandle.current().pid()));
  }

  @Test
  void evict() throws Exception {
    Lease reader = worker.readWriteLock("jobs/shared").readLock().acquire(Duration.ZERO);
    Lease otherReader = latchkey.readWriteLock("jobs/shared").readLock().acquire(Duration.ZERO);
    AtomicReference<LeaseLostException> lost = new AtomicReference<>();
    reader.onLost(lost::set);
    // tag::evict[]
    LockAdmin admin = latchkey.admin();
    String owner =
        admin.inspect("jobs/shared").orElseThrow().holders().stream()
            .filter(holder -> holder.clientId().equals(worker.clientId()))
            .findFirst()
            .orElseThrow()
            .owner();
    assertThat(admin.evict("jobs/shared", owner)).isTrue(); // that owner, all its holds
    assertThat(admin.evict("jobs/shared", owner)).isFalse(); // it holds nothing any more
    assertThat(admin.inspect("jobs/shared").orElseThrow().holders()).hasSize(1); // the other one
    // end::evict[]
    await().atMost(Duration.ofSeconds(2)).until(() -> lost.get() != null);
    assertThat(otherReader.isValid()).isTrue();
    otherReader.release();
  }

  /** Leaves a lock record as a process that crashed an hour into a one-hour lease would. */
  private static void leaveOrphanedLock(MemoryLockServer server, String name) {
    LatchkeyBackend crashed =
        server
            .backend()
            .open(new BackendContext("0badc0de", Duration.ofSeconds(5), Duration.ofSeconds(30)));
    LockRequest request =
        new LockRequest(name, "0badc0de:1", LockMode.EXCLUSIVE, 3_600_000, false, 0);
    assertThat(crashed.locks().tryAcquire(request).toCompletableFuture().join().isGranted())
        .isTrue();
    crashed.close();
  }

  @Test
  void handleShortcuts() throws Exception {
    Lease lease = worker.lock("jobs/shortcut").acquire(Duration.ZERO, Duration.ofMinutes(1));
    DistributedLock lock = latchkey.lock("jobs/shortcut");
    assertThat(lock.remainingLease()).isPresent();
    assertThat(lock.forceUnlock()).isTrue();
    assertThat(lock.isLocked()).isFalse();
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void inspectSynchronizers() throws Exception {
    worker.semaphore("imports/slots").trySetPermits(4);
    worker.countDownLatch("imports/ready").trySetCount(3);
    worker.leasedSemaphore("imports/renderers").trySetPermits(2);
    Lease permit =
        worker.leasedSemaphore("imports/renderers").acquire(Duration.ZERO, Duration.ofMinutes(1));
    // tag::inspect-synchronizers[]
    LockAdmin admin = latchkey.admin(); // needs Feature.SYNCHRONIZER_INSPECTION as well
    assertThat(admin.inspectSemaphore("imports/slots"))
        .contains(new SemaphoreInfo("imports/slots", 4));
    assertThat(admin.inspectLatch("imports/ready")).contains(new LatchInfo("imports/ready", 3));

    LeasedSemaphoreInfo renderers = admin.inspectLeasedSemaphore("imports/renderers").orElseThrow();
    assertThat(renderers.totalPermits()).isEqualTo(2);
    assertThat(renderers.availablePermits()).isEqualTo(1);
    PermitInfo held = renderers.permits().get(0); // who holds which permit, for how long
    assertThat(held.permitId()).isEqualTo(permit.holderId());
    assertThat(held.clientId()).isEqualTo(worker.clientId());
    assertThat(held.remainingLease()).isPositive();

    assertThat(admin.listSemaphores()).extracting(SemaphoreInfo::name).contains("imports/slots");
    // end::inspect-synchronizers[]
    permit.release();
  }
}
