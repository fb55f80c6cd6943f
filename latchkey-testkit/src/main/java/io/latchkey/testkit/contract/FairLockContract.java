package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Awaiting.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.latchkey.DistributedLock;
import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LockInfo;
import io.latchkey.LockTimeoutException;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import io.latchkey.testkit.RequiresMissingFeature;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Conformance: first-come first-served order and dead waiters dropping out of the queue.
 *
 * <p>Waiters are started one at a time, and the next starts only once the previous one shows in the
 * queue ({@link LockInfo#queuedWaiters()}), so the arrival order is known without sleeping.
 *
 * <ul>
 *   <li>{@code waitersAcquireInArrivalOrder}: queued waiters of several threads and clients get the
 *       lock in the order they arrived.
 *   <li>{@code waiterThatTimesOutLeavesTheQueue}: a waiter whose wait runs out leaves the queue at
 *       once, so it does not hold up the waiters behind it (its own keep-alive is far longer than
 *       the test).
 *   <li>{@code interruptedWaiterLeavesTheQueue}: likewise for a waiter that is interrupted.
 *   <li>{@code deadWaiterDropsOutAfterKeepAlive}: the place of a waiter whose client went away
 *       without leaving the queue expires after the fair-queue keep-alive, and the next waiter gets
 *       the lock.
 *   <li>{@code fairAndPlainLockOfANameAreOneLock}: the fair lock and the lock of a name exclude
 *       each other, and one owner re-enters through either.
 *   <li>{@code refusedWithoutTheFeature}: a backend without {@link Feature#FAIR_LOCK} refuses fair
 *       locks with UnsupportedFeatureException.
 * </ul>
 */
public abstract class FairLockContract extends ContractSupport {

  @Test
  @RequiresFeature(Feature.FAIR_LOCK)
  void waitersAcquireInArrivalOrder() throws Exception {
    String name = uniqueName("fair");
    Lease held = client().fairLock(name).acquire(Duration.ZERO);
    Latchkey otherProcess = newClient();
    List<Integer> order = Collections.synchronizedList(new ArrayList<>());
    List<BackgroundCall<Void>> waiters = new ArrayList<>();

    int count = 5;
    for (int i = 0; i < count; i++) {
      int id = i;
      // Alternate threads of one client with other clients.
      Latchkey waiterClient = i % 2 == 0 ? otherProcess : newClient();
      DistributedLock fair = waiterClient.fairLock(name);
      waiters.add(
          BackgroundCall.start(
              executor(1),
              () -> {
                try (Lease lease = fair.acquire(Awaiting.PATIENCE)) {
                  assertThat(lease.isValid()).isTrue();
                  order.add(id);
                }
                return null;
              }));
      int queued = i + 1;
      eventually().until(() -> queuedWaiters(name) == queued);
    }

    held.release();

    for (BackgroundCall<Void> waiter : waiters) {
      waiter.get();
    }
    assertThat(order).containsExactly(0, 1, 2, 3, 4);
  }

  @Test
  @RequiresFeature(Feature.FAIR_LOCK)
  void waiterThatTimesOutLeavesTheQueue() throws Exception {
    String name = uniqueName("fair");
    Lease held = client().fairLock(name).acquire(Duration.ZERO);
    // If giving up did not leave the queue, this waiter's place would block the queue for minutes.
    Latchkey quitterClient = newClient(options -> options.queueKeepAlive(Duration.ofMinutes(5)));
    BackgroundCall<Throwable> quitter =
        BackgroundCall.start(
            executor(1),
            () ->
                catchThrowable(() -> quitterClient.fairLock(name).acquire(Duration.ofSeconds(1))));
    eventually().until(() -> queuedWaiters(name) == 1);
    DistributedLock next = newClient().fairLock(name);
    BackgroundCall<Boolean> patient = BackgroundCall.start(executor(1), () -> holdBriefly(next));
    // Normally the second waiter queues behind the quitter; on a very slow machine the quitter may
    // already be gone, which makes this test weaker but not wrong.
    eventually().until(() -> queuedWaiters(name) == 2 || quitter.isDone());

    assertThat(quitter.get()).isInstanceOf(LockTimeoutException.class);
    eventually().until(() -> queuedWaiters(name) == 1);
    held.release();

    assertThat(patient.get()).isTrue();
  }

  @Test
  @RequiresFeature(Feature.FAIR_LOCK)
  void interruptedWaiterLeavesTheQueue() throws Exception {
    String name = uniqueName("fair");
    Lease held = client().fairLock(name).acquire(Duration.ZERO);
    Latchkey quitterClient = newClient(options -> options.queueKeepAlive(Duration.ofMinutes(5)));
    BackgroundCall<Throwable> quitter =
        BackgroundCall.start(
            executor(1),
            () -> catchThrowable(() -> quitterClient.fairLock(name).acquire(Awaiting.PATIENCE)));
    eventually().until(() -> queuedWaiters(name) == 1);
    DistributedLock next = newClient().fairLock(name);
    BackgroundCall<Boolean> patient = BackgroundCall.start(executor(1), () -> holdBriefly(next));
    eventually().until(() -> queuedWaiters(name) == 2);

    quitter.interrupt();

    assertThat(quitter.get()).isInstanceOf(InterruptedException.class);
    eventually().until(() -> queuedWaiters(name) == 1);
    held.release();
    assertThat(patient.get()).isTrue();
  }

  @Test
  @RequiresFeature(Feature.FAIR_LOCK)
  void deadWaiterDropsOutAfterKeepAlive() throws Exception {
    String name = uniqueName("fair");
    Lease held = client().fairLock(name).acquire(Duration.ZERO);
    Latchkey doomed = newClient();
    BackgroundCall.start(
        executor(1), () -> catchThrowable(() -> doomed.fairLock(name).acquire(Awaiting.PATIENCE)));
    eventually().until(() -> queuedWaiters(name) == 1);
    DistributedLock next = newClient().fairLock(name);
    BackgroundCall<Boolean> patient = BackgroundCall.start(executor(1), () -> holdBriefly(next));
    eventually().until(() -> queuedWaiters(name) == 2);

    // The first waiter's process goes away; nothing renews its place in the queue any more.
    doomed.close();
    held.release();

    assertThat(patient.get()).isTrue();
  }

  @Test
  @RequiresFeature(Feature.FAIR_LOCK)
  void fairAndPlainLockOfANameAreOneLock() {
    String name = uniqueName("fair");
    DistributedLock fair = client().fairLock(name);
    DistributedLock plain = newClient().lock(name);

    fair.lock();
    assertThat(plain.tryLock()).isFalse();
    assertThat(plain.isLocked()).isTrue();
    assertThat(client().lock(name).tryLock()).as("the same owner re-enters").isTrue();
    assertThat(fair.holdCount()).isEqualTo(2);
    client().lock(name).unlock();
    fair.unlock();

    assertThat(plain.tryLock()).isTrue();
    assertThat(fair.tryLock()).isFalse();
    plain.unlock();
    assertThat(fair.isLocked()).isFalse();
  }

  @Test
  @RequiresMissingFeature(Feature.FAIR_LOCK)
  void refusedWithoutTheFeature() {
    assertThatThrownBy(() -> client().fairLock(uniqueName("fair")))
        .isInstanceOfSatisfying(
            UnsupportedFeatureException.class,
            e -> assertThat(e.feature()).isEqualTo(Feature.FAIR_LOCK));
  }

  private int queuedWaiters(String name) {
    return client().admin().inspect(name).map(LockInfo::queuedWaiters).orElse(-1);
  }

  private static boolean holdBriefly(DistributedLock lock) throws InterruptedException {
    try (Lease lease = lock.acquire(Awaiting.PATIENCE)) {
      return lease.isValid();
    }
  }
}
