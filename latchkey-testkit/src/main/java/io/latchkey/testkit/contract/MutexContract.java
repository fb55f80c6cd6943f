package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Awaiting.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedMutex;
import io.latchkey.Feature;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LockTimeoutException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Conformance: the non-reentrant mutex.
 *
 * <ul>
 *   <li>{@code isNotReentrant}: a second acquire on the thread that holds the mutex fails (and a
 *       waiting one times out) instead of re-entering.
 *   <li>{@code releasesFromAnotherThread}: the lease of a mutex can be released by any thread.
 *   <li>{@code excludesOtherClients}: while one client holds the mutex another cannot take it; a
 *       waiting client gets it once it is released.
 *   <li>{@code sharesItsNameWithTheLock}: the mutex and the lock of one name exclude each other.
 *   <li>{@code leaseRunsOut}: a mutex taken with a lease time is free for others once it ran out,
 *       and the late release reports the loss.
 *   <li>{@code forceUnlockFreesItAndWakesWaiters}: forceUnlock frees a held mutex (true), a waiting
 *       acquireAsync then completes, and forceUnlock of a free mutex returns false.
 * </ul>
 */
public abstract class MutexContract extends ContractSupport {

  @Test
  void isNotReentrant() throws InterruptedException {
    DistributedMutex mutex = client().mutex(uniqueName("mutex"));

    Lease first = mutex.tryAcquire().orElseThrow();
    assertThat(mutex.tryAcquire()).isEmpty();
    assertThatThrownBy(() -> mutex.acquire(Duration.ofMillis(100)))
        .isInstanceOf(LockTimeoutException.class);
    assertThat(mutex.isLocked()).isTrue();

    first.release();
    assertThat(mutex.isLocked()).isFalse();
    Lease again = mutex.acquire(Duration.ZERO);
    assertThat(again.isValid()).isTrue();
    again.release();
  }

  @Test
  void releasesFromAnotherThread() throws Exception {
    String name = uniqueName("mutex");
    Lease lease = client().mutex(name).acquire(Duration.ZERO);

    BackgroundCall.run(
        executor(1),
        () -> {
          lease.release();
          return null;
        });

    assertThat(lease.isValid()).isFalse();
    assertThat(client().mutex(name).isLocked()).isFalse();
    assertThat(newClient().mutex(name).tryAcquire()).isPresent();
  }

  @Test
  void excludesOtherClients() throws Exception {
    String name = uniqueName("mutex");
    DistributedMutex mine = client().mutex(name);
    DistributedMutex theirs = newClient().mutex(name);
    Lease held = mine.acquire(Duration.ZERO);

    assertThat(theirs.tryAcquire()).isEmpty();
    assertThat(theirs.isLocked()).isTrue();
    BackgroundCall<Lease> waiter =
        BackgroundCall.start(executor(1), () -> theirs.acquire(Awaiting.PATIENCE));
    waiter.awaitParked();
    held.release();

    Lease taken = waiter.get();
    assertThat(taken.isValid()).isTrue();
    assertThat(mine.tryAcquire()).isEmpty();
    taken.release();
    assertThat(mine.isLocked()).isFalse();
  }

  @Test
  void sharesItsNameWithTheLock() {
    String name = uniqueName("mutex");
    Lease mutexLease = client().mutex(name).tryAcquire().orElseThrow();

    assertThat(newClient().lock(name).tryLock()).isFalse();
    assertThat(client().lock(name).tryLock()).as("the mutex is not a thread's lock").isFalse();
    mutexLease.release();

    client().lock(name).lock();
    assertThat(newClient().mutex(name).tryAcquire()).isEmpty();
    assertThat(client().mutex(name).tryAcquire()).isEmpty();
    client().lock(name).unlock();
  }

  @Test
  @RequiresFeature(Feature.LEASE_TIME)
  void leaseRunsOut() throws InterruptedException {
    String name = uniqueName("mutex");
    Lease expiring = client().mutex(name).acquire(Duration.ZERO, Duration.ofMillis(300));
    DistributedMutex theirs = newClient().mutex(name);

    Lease taken = eventually().until(theirs::tryAcquire, Optional::isPresent).orElseThrow();

    assertThat(expiring.isValid()).isFalse();
    assertThatThrownBy(expiring::release).isInstanceOf(LeaseLostException.class);
    assertThat(theirs.isLocked()).as("the late release must not free the new owner").isTrue();
    taken.release();
  }

  @Test
  void forceUnlockFreesItAndWakesWaiters() throws Exception {
    String name = uniqueName("mutex");
    client().mutex(name).acquire(Duration.ZERO);
    CompletableFuture<Lease> waiting =
        newClient().mutex(name).acquireAsync(Awaiting.PATIENCE).toCompletableFuture();

    assertThat(newClient().mutex(name).forceUnlock()).isTrue();

    Lease taken = waiting.get(Awaiting.PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
    assertThat(taken.isValid()).isTrue();
    taken.release();
    assertThat(client().mutex(name).forceUnlock()).isFalse();
  }
}
