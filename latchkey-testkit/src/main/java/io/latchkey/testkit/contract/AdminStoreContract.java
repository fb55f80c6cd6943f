package io.latchkey.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.ClientInfo;
import io.latchkey.Feature;
import io.latchkey.HolderInfo;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.spi.AdminStore;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.Wakeup;
import io.latchkey.testkit.RequiresFeature;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * SPI conformance: the operator's {@link AdminStore}, only on backends that declare {@link
 * Feature#ADMIN} (and {@link Feature#PRESENCE} for the presence records).
 *
 * <ul>
 *   <li>{@link #evictRemovesOneOwnerAndLeavesTheOthers}: evicting one reader leaves the other
 *       holding; the evicted grant then releases nothing and does not renew; evicting it again
 *       returns false.
 *   <li>{@link #evictOfTheExclusiveHolderFreesTheLock}: evicting the only holder removes all its
 *       holds; another owner is granted with a larger token.
 *   <li>{@link #evictWakesTheQueueHead}: evicting the exclusive holder wakes the head of the queue
 *       ({@link Feature#WAKEUP_PUSH}).
 *   <li>{@link #forceReleaseClearsEveryHolder}: force release of a held lock returns true and
 *       leaves nobody holding; of a free or never-taken lock, false; it wakes every waiter ({@link
 *       Feature#WAKEUP_PUSH}).
 *   <li>{@link #listContainsHeldLocksOnly}: list shows every held name with its holders, and no
 *       released or never-taken name.
 *   <li>{@link #heartbeatListsTheClientAndLeaveRemovesIt}: after a heartbeat clients() lists the
 *       client with its host and pid; after leave it does not.
 *   <li>{@link #presenceRecordDiesWithoutHeartbeats}: a presence record whose time to live ran out
 *       is not listed.
 * </ul>
 */
@RequiresFeature(Feature.ADMIN)
public abstract class AdminStoreContract extends SpiContractSupport {

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void evictRemovesOneOwnerAndLeavesTheOthers() {
    String name = uniqueName("spi-evict-reader");
    LatchkeyBackend first = open();
    LatchkeyBackend second = open();
    String evicted = owner("evicted");
    String kept = owner("kept");
    long token = acquired(first, shared(name, evicted)).fencingToken();
    acquired(first, shared(name, evicted));
    acquired(second, shared(name, kept));

    assertThat(join(second.admin().evict(name, evicted))).isTrue();

    assertThat(inspect(second, name).orElseThrow().holders())
        .extracting(HolderInfo::owner)
        .containsExactly(kept);
    assertThat(join(second.admin().evict(name, evicted))).as("evicted again").isFalse();
    assertThat(release(first, name, evicted, token, LockMode.SHARED))
        .isEqualTo(ReleaseResult.NOT_HELD);
    assertThat(join(first.renew(List.of(lockGrant(name, evicted, token)), 1)).gone()).hasSize(1);
  }

  @Test
  void evictOfTheExclusiveHolderFreesTheLock() {
    String name = uniqueName("spi-evict");
    LatchkeyBackend first = open();
    LatchkeyBackend second = open();
    String holder = owner("holder");
    long token = acquired(first, exclusive(name, holder)).fencingToken();
    acquired(first, exclusive(name, holder));

    assertThat(join(second.admin().evict(name, holder))).isTrue();

    assertThat(inspect(second, name)).isEmpty();
    assertThat(acquired(second, exclusive(name, owner("next"))).fencingToken())
        .isGreaterThan(token);
    assertThat(join(second.admin().evict(name, owner("stranger")))).isFalse();
  }

  @Test
  @RequiresFeature(Feature.WAKEUP_PUSH)
  void evictWakesTheQueueHead() {
    String name = uniqueName("spi-evict-wakes");
    LatchkeyBackend holderBackend = open();
    LatchkeyBackend waiterBackend = open();
    Wakeups wakeups = subscribe(open(), ResourceType.LOCK, name);
    String holder = owner("holder");
    String head = owner("head");
    acquired(holderBackend, exclusive(name, holder));
    refused(waiterBackend, queued(name, head, false), LONG_LEASE);

    assertThat(join(waiterBackend.admin().evict(name, holder))).isTrue();

    assertThat(wakeups.next()).isEqualTo(Wakeup.forOwner(head));
  }

  @Test
  void forceReleaseClearsEveryHolder() {
    String name = uniqueName("spi-force-release");
    LatchkeyBackend holderBackend = open();
    LatchkeyBackend admin = open();
    @Nullable Wakeups wakeups =
        has(Feature.WAKEUP_PUSH) ? subscribe(open(), ResourceType.LOCK, name) : null;
    String holder = owner("holder");
    long token = acquired(holderBackend, exclusive(name, holder)).fencingToken();
    acquired(holderBackend, exclusive(name, holder));
    refused(holderBackend, queued(name, owner("waiter"), false), LONG_LEASE);

    assertThat(join(admin.admin().forceRelease(name))).isTrue();

    assertThat(inspect(admin, name)).isEmpty();
    if (wakeups != null) {
      assertThat(wakeups.next()).isEqualTo(Wakeup.of(Wakeup.ALL));
    }
    assertThat(release(holderBackend, name, holder, token, LockMode.EXCLUSIVE))
        .isEqualTo(ReleaseResult.NOT_HELD);
    assertThat(join(admin.admin().forceRelease(name))).as("a free lock").isFalse();
    assertThat(join(admin.admin().forceRelease(uniqueName("spi-never-taken"))))
        .as("a lock never taken")
        .isFalse();
  }

  @Test
  void listContainsHeldLocksOnly() {
    String held = uniqueName("spi-list-held");
    String alsoHeld = uniqueName("spi-list-also-held");
    String released = uniqueName("spi-list-released");
    String neverTaken = uniqueName("spi-list-never");
    LatchkeyBackend backend = open();
    String holder = owner("holder");
    String other = owner("other");
    acquired(backend, exclusive(held, holder));
    granted(join(open().locks().tryAcquire(exclusive(alsoHeld, other))));
    long token = acquired(backend, exclusive(released, holder)).fencingToken();
    release(backend, released, holder, token, LockMode.EXCLUSIVE);

    List<LockInfo> listed = join(open().admin().list());

    assertThat(listed)
        .extracting(LockInfo::name)
        .contains(held, alsoHeld)
        .doesNotContain(released, neverTaken);
    assertThat(listed)
        .filteredOn(info -> info.name().equals(alsoHeld))
        .singleElement()
        .satisfies(
            info ->
                assertThat(info.holders()).extracting(HolderInfo::owner).containsExactly(other));
  }

  @Test
  @RequiresFeature(Feature.PRESENCE)
  void heartbeatListsTheClientAndLeaveRemovesIt() {
    LatchkeyBackend backend = open();
    AdminStore observer = open().admin();
    ClientInfo self = client(owner("spi-client"));

    join(backend.admin().heartbeat(self, LONG_LEASE));
    assertThat(join(observer.clients()))
        .filteredOn(info -> info.clientId().equals(self.clientId()))
        .singleElement()
        .satisfies(
            info -> {
              assertThat(info.host()).isEqualTo(self.host());
              assertThat(info.pid()).isEqualTo(self.pid());
            });

    join(backend.admin().leave(self.clientId()));
    assertThat(join(observer.clients()))
        .extracting(ClientInfo::clientId)
        .doesNotContain(self.clientId());
  }

  @Test
  @RequiresFeature(Feature.PRESENCE)
  void presenceRecordDiesWithoutHeartbeats() {
    LatchkeyBackend backend = open();
    ClientInfo self = client(owner("spi-client"));

    long timeToLive = 1_000;

    join(backend.admin().heartbeat(self, timeToLive));

    assertThat(join(backend.admin().clients()))
        .extracting(ClientInfo::clientId)
        .as("listed within its time to live of %d ms", timeToLive)
        .contains(self.clientId());
    Awaiting.eventually()
        .until(
            () ->
                join(backend.admin().clients()).stream()
                    .noneMatch(info -> info.clientId().equals(self.clientId())));
  }

  private static ClientInfo client(String clientId) {
    return new ClientInfo(
        clientId,
        "spi-kit-host",
        ProcessHandle.current().pid(),
        Instant.now().truncatedTo(ChronoUnit.MILLIS));
  }
}
