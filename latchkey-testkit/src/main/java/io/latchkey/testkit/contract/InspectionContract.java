package io.latchkey.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.Feature;
import io.latchkey.HolderInfo;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import io.latchkey.testkit.RequiresMissingFeature;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Conformance: inspection, listing and force release.
 *
 * <ul>
 *   <li>{@code inspectShowsTheHolder}: inspect shows the one exclusive holder with its holds, the
 *       remaining lease, the fencing token of its grant and the client id of the client that holds
 *       it.
 *   <li>{@code inspectOfAFreeLockIsEmpty}: a lock never taken, and one released, inspect as empty.
 *   <li>{@code inspectShowsSharedHolders}: readers of a read-write lock show as shared holders,
 *       each with its own owner and client id.
 *   <li>{@code listShowsHeldLocksOnly}: list contains every held lock (locks and mutexes) with its
 *       holder, and no released or never-taken lock.
 *   <li>{@code listIsRefusedWithoutTheFeature}: a backend without {@link Feature#ADMIN} refuses
 *       list with UnsupportedFeatureException.
 *   <li>{@code forceReleaseFreesAnotherClientsLock}: an administrator frees a lock that another
 *       client holds (true), a waiter gets it, and force release of a free lock returns false.
 *   <li>{@code remainingLeaseOfALock}: remainingLease is empty while free and shows the holder's
 *       lease, within its lease time, while held.
 *   <li>{@code evictRemovesOneHolderAndWakesAWaiter}: evicting a reader leaves the other reader
 *       holding; evicting the last holder lets a waiting writer in, and the evicted owner's lease
 *       is reported lost; evicting an owner that holds nothing returns false.
 *   <li>{@code clientsListsLiveClients}: both open clients are listed with this process's pid, and
 *       a closed client is not.
 * </ul>
 */
public abstract class InspectionContract extends ContractSupport {

  @Test
  @RequiresFeature(Feature.LEASE_TIME)
  void inspectShowsTheHolder() throws InterruptedException {
    String name = uniqueName("inspect");
    Latchkey holderClient = newClient();
    DistributedLock lock = holderClient.lock(name);
    Duration leaseTime = Duration.ofSeconds(30);
    Lease outer = lock.acquire(Duration.ZERO, leaseTime);
    lock.acquire(Duration.ZERO, leaseTime);

    LockInfo info = client().admin().inspect(name).orElseThrow();

    assertThat(info.name()).isEqualTo(name);
    assertThat(info.queuedWaiters()).isZero();
    assertThat(info.holders())
        .singleElement()
        .satisfies(
            holder -> {
              assertThat(holder.owner()).isNotBlank();
              assertThat(holder.clientId()).isEqualTo(holderClient.clientId());
              assertThat(holder.mode()).isEqualTo(LockMode.EXCLUSIVE);
              assertThat(holder.holds()).isEqualTo(2);
              assertThat(holder.remainingLease())
                  .isPositive()
                  .isLessThanOrEqualTo(leaseTime)
                  .isGreaterThan(leaseTime.dividedBy(2));
              assertThat(holder.fencingToken()).isEqualTo(outer.fencingToken());
            });
  }

  @Test
  void inspectOfAFreeLockIsEmpty() {
    String name = uniqueName("inspect");
    assertThat(client().admin().inspect(name)).isEmpty();

    DistributedLock lock = newClient().lock(name);
    lock.lock();
    assertThat(client().admin().inspect(name)).isPresent();
    lock.unlock();

    assertThat(client().admin().inspect(name)).isEmpty();
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void inspectShowsSharedHolders() {
    String name = uniqueName("inspect");
    Latchkey first = newClient();
    Latchkey second = newClient();
    DistributedReadWriteLock one = first.readWriteLock(name);
    DistributedReadWriteLock two = second.readWriteLock(name);
    one.readLock().lock();
    two.readLock().lock();
    two.readLock().lock();

    LockInfo info = client().admin().inspect(name).orElseThrow();

    assertThat(info.holders()).hasSize(2).allMatch(holder -> holder.mode() == LockMode.SHARED);
    assertThat(info.holders()).extracting(HolderInfo::owner).doesNotHaveDuplicates();
    assertThat(info.holders())
        .extracting(HolderInfo::clientId, HolderInfo::holds)
        .containsExactlyInAnyOrder(tuple(first.clientId(), 1), tuple(second.clientId(), 2));
  }

  @Test
  @RequiresFeature(Feature.ADMIN)
  void listShowsHeldLocksOnly() {
    String held = uniqueName("list-held");
    String heldMutex = uniqueName("list-mutex");
    String released = uniqueName("list-released");
    String neverTaken = uniqueName("list-never");
    Latchkey other = newClient();
    client().lock(held).lock();
    assertThat(other.mutex(heldMutex).tryAcquire()).isPresent();
    DistributedLock releasedLock = other.lock(released);
    releasedLock.lock();
    releasedLock.unlock();

    List<LockInfo> listed = client().admin().list();

    assertThat(listed)
        .extracting(LockInfo::name)
        .contains(held, heldMutex)
        .doesNotContain(released, neverTaken);
    assertThat(listed)
        .filteredOn(info -> info.name().equals(held))
        .singleElement()
        .satisfies(
            info ->
                assertThat(info.holders())
                    .singleElement()
                    .extracting(HolderInfo::clientId)
                    .isEqualTo(client().clientId()));
  }

  @Test
  @RequiresMissingFeature(Feature.ADMIN)
  void listIsRefusedWithoutTheFeature() {
    assertThatThrownBy(() -> client().admin().list())
        .isInstanceOfSatisfying(
            UnsupportedFeatureException.class,
            e -> assertThat(e.feature()).isEqualTo(Feature.ADMIN));
  }

  @Test
  void forceReleaseFreesAnotherClientsLock() throws Exception {
    String name = uniqueName("inspect");
    newClient().lock(name).lock();
    DistributedLock waiterLock = newClient().lock(name);
    BackgroundCall<Boolean> waiter =
        BackgroundCall.start(
            executor(1),
            () -> {
              try (Lease lease = waiterLock.acquire(Awaiting.PATIENCE)) {
                return lease.isValid();
              }
            });
    waiter.awaitParked();

    assertThat(client().admin().forceRelease(name)).isTrue();

    assertThat(waiter.get()).as("a waiter gets the force-released lock").isTrue();
    assertThat(client().admin().forceRelease(name)).isFalse();
    assertThat(client().admin().forceRelease(uniqueName("never-taken"))).isFalse();
  }

  @Test
  @RequiresFeature(Feature.LEASE_TIME)
  void remainingLeaseOfALock() throws InterruptedException {
    String name = uniqueName("inspect");
    DistributedLock observer = client().lock(name);
    assertThat(observer.remainingLease()).isEmpty();

    Duration leaseTime = Duration.ofSeconds(30);
    Lease lease = newClient().lock(name).acquire(Duration.ZERO, leaseTime);

    assertThat(observer.remainingLease())
        .hasValueSatisfying(
            left ->
                assertThat(left)
                    .isLessThanOrEqualTo(leaseTime)
                    .isGreaterThan(leaseTime.dividedBy(2)));
    lease.release();
    assertThat(observer.remainingLease()).isEmpty();
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void evictRemovesOneHolderAndWakesAWaiter() throws Exception {
    String name = uniqueName("evict");
    Latchkey first = newClient();
    Latchkey second = newClient();
    Lease firstRead = first.readWriteLock(name).readLock().acquire(Duration.ZERO);
    Lease secondRead = second.readWriteLock(name).readLock().acquire(Duration.ZERO);
    java.util.concurrent.CompletableFuture<Lease> writer =
        client().lock(name).acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();

    assertThat(client().admin().evict(name, firstRead.holderId())).isTrue();
    assertThat(client().admin().evict(name, firstRead.holderId())).isFalse();
    assertThat(client().admin().inspect(name).orElseThrow().holders())
        .extracting(HolderInfo::owner)
        .containsExactly(secondRead.holderId());
    assertThat(writer).isNotDone();

    assertThat(client().admin().evict(name, secondRead.holderId())).isTrue();
    Lease written = writer.get(10, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(written.isValid()).isTrue();
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> !firstRead.isValid() && !secondRead.isValid());
    written.release();
  }

  @Test
  @RequiresFeature(Feature.PRESENCE)
  void clientsListsLiveClients() {
    Latchkey first = newClient();
    Latchkey second = newClient();
    long pid = ProcessHandle.current().pid();
    assertThat(client().admin().clients())
        .filteredOn(
            info ->
                info.clientId().equals(first.clientId())
                    || info.clientId().equals(second.clientId()))
        .hasSize(2)
        .allSatisfy(info -> assertThat(info.pid()).isEqualTo(pid));
    second.close();
    assertThat(client().admin().clients())
        .extracting(io.latchkey.ClientInfo::clientId)
        .contains(first.clientId())
        .doesNotContain(second.clientId());
  }
}
