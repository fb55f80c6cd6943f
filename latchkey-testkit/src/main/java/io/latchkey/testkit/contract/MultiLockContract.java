package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Contention.assertStillWaiting;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LockTimeoutException;
import io.latchkey.MultiLease;
import io.latchkey.MultiLock;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Conformance: multi-lock all-or-none and deadlock-free ordering.
 *
 * <ul>
 *   <li>{@link #tryAcquireTakesAllOrNone}: whichever member another client holds, {@code
 *       tryAcquire} returns empty and leaves none of the other members held; once all are free it
 *       takes them all.
 *   <li>{@link #acquireTimeoutReleasesTheMembersTaken}: when the last member cannot be had within
 *       the wait, {@code acquire} throws {@link LockTimeoutException} and the members already taken
 *       are free again.
 *   <li>{@link #oppositeOrdersNeverDeadlock}: threads of two clients taking {@code (a, b)} and
 *       {@code (b, a)} over and over all finish, and never overlap.
 *   <li>{@link #multiLeaseReleasesEveryMember}: a {@link MultiLease} holds one lease per member;
 *       releasing (or closing) it frees every member.
 *   <li>{@link #releaseFreesEveryMemberEvenWhenOneWasLost}: when one member was force-released,
 *       releasing the {@link MultiLease} throws {@link LeaseLostException} and still frees the
 *       other members.
 *   <li>{@link #failingMemberLeavesNothingHeld}: when asking for a member fails (its client is
 *       closed), {@code tryAcquire} and {@code acquire} throw and leave none of the members held.
 *   <li>{@link #memberAlreadyHeldByTheCallerKeepsItsOuterHold}: a member the caller already holds
 *       is re-entered, and neither a refused {@code tryAcquire} nor a release of the multi-lease
 *       takes away the caller's own hold.
 *   <li>{@link #membersMayComeFromDifferentClients}: members of two clients are held together and
 *       released together.
 *   <li>{@link #duplicateMembersAreRefused}: the same lock twice (by one handle, two handles or two
 *       clients), or no lock at all, is an {@link IllegalArgumentException}.
 *   <li>{@link #acquireAsyncWaitsForEveryMember}: the async form completes once the last member is
 *       free, and when its wait runs out it fails with {@link LockTimeoutException} and frees what
 *       it took.
 *   <li>{@link #cancelledAcquireAsyncLeavesNothingHeld}: cancelling the stage of {@code
 *       acquireAsync} abandons the wait and frees the members already taken.
 * </ul>
 */
public abstract class MultiLockContract extends ContractSupport {
  private static final Duration LONG_WAIT = Duration.ofSeconds(10);
  private static final Duration SHORT_WAIT = Duration.ofMillis(200);
  private static final Duration LONG_LEASE = Duration.ofSeconds(30);

  @Test
  public void tryAcquireTakesAllOrNone() {
    List<String> names =
        List.of(uniqueName("multi-a"), uniqueName("multi-b"), uniqueName("multi-c"));
    Latchkey other = newClient();
    MultiLock multi = multiLockOf(client(), names);

    for (String busy : names) {
      Lease blocking = other.lock(busy).tryAcquire().orElseThrow();
      assertThat(multi.tryAcquire()).as("a multi-lock with '%s' held elsewhere", busy).isEmpty();
      for (String name : names) {
        assertThat(client().lock(name).holdCount()).as("hold count of '%s'", name).isZero();
        if (!name.equals(busy)) {
          assertThat(isFree(other, name)).as("'%s' left held", name).isTrue();
        }
      }
      blocking.release();
    }

    MultiLease all = multi.tryAcquire().orElseThrow();
    assertThat(all.leases()).hasSize(3);
    assertThat(names).allSatisfy(name -> assertThat(isFree(other, name)).isFalse());
    all.release();
    assertThat(names).allSatisfy(name -> assertThat(isFree(other, name)).isTrue());
  }

  @Test
  @RequiresFeature(Feature.LEASE_TIME)
  public void acquireTimeoutReleasesTheMembersTaken() {
    // Members are taken in name order: the busy one comes last, so the others are taken first.
    String first = uniqueName("multi-a");
    String second = uniqueName("multi-b");
    String busy = uniqueName("multi-z");
    Latchkey other = newClient();
    Lease blocking = other.lock(busy).tryAcquire().orElseThrow();
    MultiLock multi = multiLockOf(client(), List.of(busy, first, second));

    assertThatThrownBy(() -> multi.acquire(SHORT_WAIT)).isInstanceOf(LockTimeoutException.class);
    assertThat(isFree(other, first)).as("first member after a timeout").isTrue();
    assertThat(isFree(other, second)).as("second member after a timeout").isTrue();
    assertThatThrownBy(() -> multi.acquire(SHORT_WAIT, LONG_LEASE))
        .isInstanceOf(LockTimeoutException.class);
    assertThat(isFree(other, first)).as("first member after a timeout").isTrue();
    assertThat(isFree(other, second)).as("second member after a timeout").isTrue();
    assertThat(client().lock(first).holdCount()).isZero();
    assertThat(client().lock(second).holdCount()).isZero();
    blocking.release();
  }

  @Test
  public void oppositeOrdersNeverDeadlock() throws InterruptedException {
    String a = uniqueName("multi-order-a");
    String b = uniqueName("multi-order-b");
    int rounds = 100;
    List<Latchkey> clients = List.of(client(), newClient());
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    AtomicInteger grants = new AtomicInteger();

    Contention.run(
        executor(4),
        clients,
        2,
        Duration.ofSeconds(120),
        (latchkey, thread) -> {
          boolean forward = (thread == 0) == (latchkey == clients.get(0));
          DistributedLock x = latchkey.lock(forward ? a : b);
          DistributedLock y = latchkey.lock(forward ? b : a);
          MultiLock multi = latchkey.multiLock(x, y);
          for (int i = 0; i < rounds; i++) {
            MultiLease lease = multi.acquire(Duration.ofSeconds(30));
            try {
              if (inside.incrementAndGet() != 1) {
                overlaps.incrementAndGet();
              }
              Thread.yield();
              inside.decrementAndGet();
              grants.incrementAndGet();
            } finally {
              lease.release();
            }
          }
        });

    assertThat(overlaps.get()).as("times two multi-lock holders overlapped").isZero();
    assertThat(grants.get()).isEqualTo(4 * rounds);
  }

  @Test
  @RequiresFeature(Feature.LEASE_TIME)
  public void multiLeaseReleasesEveryMember() throws InterruptedException {
    List<String> names =
        List.of(uniqueName("multi-a"), uniqueName("multi-b"), uniqueName("multi-c"));
    Latchkey other = newClient();
    MultiLock multi = multiLockOf(client(), names);

    MultiLease lease = multi.acquire(LONG_WAIT);
    assertThat(lease.isValid()).isTrue();
    assertThat(lease.leases()).extracting(Lease::name).containsExactlyInAnyOrderElementsOf(names);
    assertThat(multi.members()).allSatisfy(m -> assertThat(m.isHeldByCurrentOwner()).isTrue());
    assertThat(names).allSatisfy(name -> assertThat(isFree(other, name)).isFalse());
    lease.release();
    assertThat(names).allSatisfy(name -> assertThat(isFree(other, name)).isTrue());
    assertThat(multi.members()).allSatisfy(m -> assertThat(m.holdCount()).isZero());

    try (MultiLease closing = multi.acquire(LONG_WAIT, LONG_LEASE)) {
      assertThat(closing.leases()).hasSize(3);
      assertThat(names).allSatisfy(name -> assertThat(isFree(other, name)).isFalse());
    }
    assertThat(names).allSatisfy(name -> assertThat(isFree(other, name)).isTrue());
  }

  @Test
  public void releaseFreesEveryMemberEvenWhenOneWasLost() throws InterruptedException {
    List<String> names =
        List.of(uniqueName("multi-a"), uniqueName("multi-b"), uniqueName("multi-c"));
    Latchkey other = newClient();
    MultiLease lease = multiLockOf(client(), names).acquire(LONG_WAIT);

    assertThat(other.admin().forceRelease(names.get(1))).isTrue();
    assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
    assertThat(names).allSatisfy(name -> assertThat(isFree(other, name)).isTrue());
    assertThat(names).allSatisfy(name -> assertThat(client().lock(name).holdCount()).isZero());
  }

  @Test
  public void failingMemberLeavesNothingHeld() {
    // Members are taken in name order: the failing one comes last, so the others are taken first.
    String first = uniqueName("multi-a");
    String second = uniqueName("multi-b");
    String failing = uniqueName("multi-z");
    Latchkey closing = newClient();
    Latchkey probe = newClient();
    MultiLock multi =
        MultiLock.of(client().lock(first), client().lock(second), closing.lock(failing));
    closing.close();

    assertThatThrownBy(multi::tryAcquire).isInstanceOf(IllegalStateException.class);
    assertThat(isFree(probe, first)).as("first member after a failed tryAcquire").isTrue();
    assertThat(isFree(probe, second)).as("second member after a failed tryAcquire").isTrue();
    assertThatThrownBy(() -> multi.acquire(LONG_WAIT)).isInstanceOf(IllegalStateException.class);
    assertThat(isFree(probe, first)).as("first member after a failed acquire").isTrue();
    assertThat(isFree(probe, second)).as("second member after a failed acquire").isTrue();
  }

  @Test
  public void memberAlreadyHeldByTheCallerKeepsItsOuterHold() throws InterruptedException {
    String a = uniqueName("multi-outer-a");
    String b = uniqueName("multi-outer-b");
    Latchkey other = newClient();
    DistributedLock outer = client().lock(a);
    Lease outerLease = outer.acquire(LONG_WAIT);
    MultiLock multi = multiLockOf(client(), List.of(a, b));

    Lease blocking = other.lock(b).tryAcquire().orElseThrow();
    assertThat(multi.tryAcquire()).isEmpty();
    assertThat(outer.holdCount()).as("outer hold after a refused tryAcquire").isEqualTo(1);
    assertThat(isFree(other, a)).isFalse();
    blocking.release();

    MultiLease lease = multi.acquire(LONG_WAIT);
    assertThat(outer.holdCount()).as("holds while the multi-lock re-enters").isEqualTo(2);
    lease.release();
    assertThat(outer.holdCount()).as("outer hold after the multi-lease is released").isEqualTo(1);
    assertThat(isFree(other, a)).isFalse();
    assertThat(isFree(other, b)).isTrue();
    outerLease.release();
    assertThat(isFree(other, a)).isTrue();
  }

  @Test
  public void membersMayComeFromDifferentClients() throws InterruptedException {
    String a = uniqueName("multi-client-a");
    String b = uniqueName("multi-client-b");
    Latchkey first = client();
    Latchkey second = newClient();
    Latchkey probe = newClient();
    MultiLock multi = MultiLock.of(second.lock(b), first.lock(a));

    MultiLease lease = multi.acquire(LONG_WAIT);
    assertThat(first.lock(a).isHeldByCurrentOwner()).isTrue();
    assertThat(second.lock(b).isHeldByCurrentOwner()).isTrue();
    assertThat(isFree(probe, a)).isFalse();
    assertThat(isFree(probe, b)).isFalse();
    lease.release();
    assertThat(isFree(probe, a)).isTrue();
    assertThat(isFree(probe, b)).isTrue();

    Lease blocking = probe.lock(b).tryAcquire().orElseThrow();
    assertThat(multi.tryAcquire()).isEmpty();
    assertThat(isFree(probe, a)).as("the other client's member after a refusal").isTrue();
    blocking.release();
  }

  @Test
  public void duplicateMembersAreRefused() {
    String a = uniqueName("multi-dup-a");
    String b = uniqueName("multi-dup-b");
    DistributedLock lock = client().lock(a);

    assertThatThrownBy(() -> MultiLock.of(lock, lock))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(a);
    assertThatThrownBy(
            () -> client().multiLock(client().lock(a), client().lock(b), client().lock(a)))
        .as("two handles of one lock")
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(a);
    assertThatThrownBy(() -> MultiLock.of(client().lock(a), newClient().lock(a)))
        .as("one lock through two clients of the same backend")
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(a);
    assertThatThrownBy(MultiLock::of).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  public void acquireAsyncWaitsForEveryMember() throws Exception {
    String a = uniqueName("multi-async-a");
    String b = uniqueName("multi-async-b");
    Latchkey other = newClient();
    MultiLock multi = multiLockOf(client(), List.of(a, b));
    Lease blocking = other.lock(b).tryAcquire().orElseThrow();

    CompletableFuture<MultiLease> waiting = multi.acquireAsync(LONG_WAIT).toCompletableFuture();
    assertStillWaiting("acquireAsync with a member held elsewhere", waiting);
    blocking.release();
    MultiLease lease = Contention.succeeded(waiting, LONG_WAIT);
    assertThat(lease.leases()).hasSize(2);
    assertThat(isFree(other, a)).isFalse();
    assertThat(isFree(other, b)).isFalse();
    lease.release();

    Lease blockingAgain = other.lock(b).tryAcquire().orElseThrow();
    assertThat(multi.acquireAsync(SHORT_WAIT))
        .failsWithin(LONG_WAIT)
        .withThrowableOfType(ExecutionException.class)
        .withCauseInstanceOf(LockTimeoutException.class);
    await("the member taken before the timeout is released")
        .pollInterval(Duration.ofMillis(20))
        .atMost(LONG_WAIT)
        .until(() -> isFree(other, a));
    blockingAgain.release();
  }

  @Test
  public void cancelledAcquireAsyncLeavesNothingHeld() {
    String a = uniqueName("multi-cancel-a");
    String b = uniqueName("multi-cancel-b");
    Latchkey other = newClient();
    MultiLock multi = multiLockOf(client(), List.of(a, b));
    Lease blocking = other.lock(b).tryAcquire().orElseThrow();

    CompletableFuture<MultiLease> waiting = multi.acquireAsync(LONG_WAIT).toCompletableFuture();
    assertStillWaiting("acquireAsync with a member held elsewhere", waiting);
    assertThat(waiting.cancel(true)).isTrue();
    await("the member taken before the cancellation is released")
        .pollInterval(Duration.ofMillis(20))
        .atMost(Duration.ofSeconds(5))
        .until(() -> isFree(other, a));
    blocking.release();

    await("no member is taken after the cancellation")
        .pollInterval(Duration.ofMillis(50))
        .during(Contention.SETTLE.multipliedBy(2))
        .atMost(Duration.ofSeconds(3))
        .until(() -> isFree(other, a) && isFree(other, b));
  }

  private static MultiLock multiLockOf(Latchkey latchkey, List<String> names) {
    return latchkey.multiLock(names.stream().map(latchkey::lock).toArray(DistributedLock[]::new));
  }

  /** Whether {@code probe} could take the lock now; if it could, it gives it back at once. */
  private static boolean isFree(Latchkey probe, String name) {
    Optional<Lease> taken = probe.lock(name).tryAcquire();
    taken.ifPresent(Lease::release);
    return taken.isPresent();
  }
}
