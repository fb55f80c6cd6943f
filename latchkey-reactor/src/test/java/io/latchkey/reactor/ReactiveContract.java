package io.latchkey.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LockTimeoutException;
import io.latchkey.MultiLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The Reactor forms against a real backend, the same checks for each: acquiring as a Mono,
 * cancelling (which gives back what was granted), holding a lock or permits for the duration of a
 * Mono or Flux, and the semaphore, latch and multi-lock forms.
 */
abstract class ReactiveContract {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final AtomicLong NAMES = new AtomicLong();

  private final List<Latchkey> clients = new ArrayList<>();

  /**
   * @return the backend URI the clients connect to
   */
  abstract String uri();

  Latchkey newClient() {
    Latchkey client =
        Latchkey.connect(
            uri(),
            LatchkeyOptions.builder()
                .leaseTime(Duration.ofSeconds(2))
                .operationTimeout(Duration.ofSeconds(2))
                .closeOnShutdown(false)
                .build());
    clients.add(client);
    return client;
  }

  static String uniqueName(String hint) {
    return "reactor/" + hint + "/" + System.nanoTime() + "-" + NAMES.incrementAndGet();
  }

  @AfterEach
  void closeClients() {
    clients.forEach(Latchkey::close);
    clients.clear();
  }

  @Test
  void acquireIsColdAndGivesALease() {
    String name = uniqueName("acquire");
    DistributedLock theirs = newClient().lock(name);
    Mono<Lease> acquire = Reactive.of(newClient().lock(name)).acquire(WAIT);
    assertThat(isFree(theirs)).as("nothing happens before subscription").isTrue();

    Lease lease = Objects.requireNonNull(acquire.block(WAIT), "no lease");

    assertThat(lease.isValid()).isTrue();
    assertThat(isFree(theirs)).isFalse();
    StepVerifier.create(Reactive.release(lease)).verifyComplete();
    assertThat(isFree(theirs)).isTrue();
  }

  @Test
  void aBusyLockTimesOut() {
    String name = uniqueName("busy");
    Lease held = newClient().lock(name).tryAcquire().orElseThrow();

    StepVerifier.create(Reactive.of(newClient().lock(name)).acquire(Duration.ofMillis(100)))
        .verifyError(LockTimeoutException.class);
    held.release();
  }

  @Test
  void cancellingAWaitingAcquireLeavesNothingHeld() {
    String name = uniqueName("cancel");
    Latchkey holder = newClient();
    Lease held = holder.lock(name).tryAcquire().orElseThrow();
    AtomicReference<Lease> leaked = new AtomicReference<>();
    Disposable waiting = Reactive.of(newClient().lock(name)).acquire(WAIT).subscribe(leaked::set);

    waiting.dispose();
    held.release();

    DistributedLock probe = newClient().lock(name);
    await().atMost(WAIT).until(() -> isFree(probe));
    assertThat(leaked.get()).isNull();
  }

  @Test
  void withLeaseHoldsTheLockForTheWorkAndReleasesAfter() {
    String name = uniqueName("with-lease");
    DistributedLock theirs = newClient().lock(name);
    Mono<Boolean> heldDuringWork =
        Reactive.of(newClient().lock(name))
            .withLease(WAIT, lease -> Mono.fromCallable(() -> lease.isValid() && !isFree(theirs)));

    StepVerifier.create(heldDuringWork).expectNext(true).verifyComplete();
    assertThat(isFree(theirs)).isTrue();
  }

  @Test
  void withLeaseReleasesWhenTheWorkFailsOrIsCancelled() {
    String name = uniqueName("with-lease-failing");
    DistributedLock theirs = newClient().lock(name);
    ReactiveLock lock = Reactive.of(newClient().lock(name));

    StepVerifier.create(
            lock.withLeaseMany(WAIT, lease -> Flux.error(new IllegalStateException("boom"))))
        .verifyErrorMessage("boom");
    assertThat(isFree(theirs)).isTrue();

    StepVerifier.create(lock.withLeaseMany(WAIT, lease -> Flux.just(1, 2).concatWith(Flux.never())))
        .expectNext(1, 2)
        .thenCancel()
        .verify(WAIT);
    await().atMost(WAIT).until(() -> isFree(theirs));
  }

  @Test
  void mutexAndLeasedSemaphoreHandOutLeases() {
    String name = uniqueName("mutex");
    Latchkey client = newClient();
    StepVerifier.create(
            Reactive.of(client.mutex(name))
                .withLease(WAIT, lease -> Mono.just(lease.holderId().startsWith("tok-"))))
        .expectNext(true)
        .verifyComplete();

    String semaphoreName = uniqueName("leased-semaphore");
    client.leasedSemaphore(semaphoreName).trySetPermits(1);
    ReactiveLeasedSemaphore semaphore = Reactive.of(client.leasedSemaphore(semaphoreName));
    Lease permit = Objects.requireNonNull(semaphore.acquire(WAIT).block(WAIT), "no permit");
    StepVerifier.create(semaphore.acquire(Duration.ZERO)).verifyError(LockTimeoutException.class);
    StepVerifier.create(semaphore.release(permit.holderId())).expectNext(true).verifyComplete();
    assertThat(client.leasedSemaphore(semaphoreName).availablePermits()).isEqualTo(1);
  }

  @Test
  void semaphorePermitsAreHeldForTheWork() {
    String name = uniqueName("semaphore");
    Latchkey client = newClient();
    client.semaphore(name).trySetPermits(3);
    ReactiveSemaphore semaphore = Reactive.of(client.semaphore(name));

    StepVerifier.create(
            semaphore.withPermits(
                2, WAIT, () -> Mono.fromCallable(() -> client.semaphore(name).availablePermits())))
        .expectNext(1)
        .verifyComplete();
    assertThat(client.semaphore(name).availablePermits()).isEqualTo(3);

    StepVerifier.create(semaphore.acquire(3, WAIT)).verifyComplete();
    StepVerifier.create(semaphore.acquire(1, Duration.ofMillis(50)))
        .verifyError(LockTimeoutException.class);
    StepVerifier.create(semaphore.release(3)).verifyComplete();
    StepVerifier.create(semaphore.withPermitsMany(3, WAIT, () -> Flux.range(1, 3)))
        .expectNext(1, 2, 3)
        .verifyComplete();
    assertThat(client.semaphore(name).availablePermits()).isEqualTo(3);
  }

  @Test
  void latchCountsDownAndWakesItsWaiter() {
    String name = uniqueName("latch");
    Latchkey client = newClient();
    client.countDownLatch(name).trySetCount(2);
    ReactiveCountDownLatch latch = Reactive.of(newClient().countDownLatch(name));

    StepVerifier.create(latch.await(Duration.ofMillis(50))).expectNext(false).verifyComplete();
    StepVerifier.create(
            latch
                .await(WAIT)
                .zipWith(
                    latch
                        .countDown()
                        .then(latch.countDown())
                        .delaySubscription(Duration.ofMillis(50))))
        .assertNext(both -> assertThat(both.getT1()).isTrue())
        .verifyComplete();
  }

  @Test
  void multiLockTakesAllOrNone() {
    String first = uniqueName("multi-a");
    String second = uniqueName("multi-b");
    Latchkey client = newClient();
    Latchkey other = newClient();
    ReactiveMultiLock both = Reactive.of(MultiLock.of(client.lock(first), client.lock(second)));

    StepVerifier.create(
            both.withLeases(
                WAIT,
                lease ->
                    Mono.fromCallable(
                        () -> isFree(other.lock(first)) || isFree(other.lock(second)))))
        .expectNext(false)
        .verifyComplete();
    assertThat(isFree(other.lock(first))).isTrue();
    assertThat(isFree(other.lock(second))).isTrue();

    Lease blocking = other.lock(second).tryAcquire().orElseThrow();
    StepVerifier.create(both.acquire(Duration.ofMillis(100), Duration.ofSeconds(5)))
        .verifyError(LockTimeoutException.class);
    assertThat(isFree(other.lock(first))).as("none of them is held").isTrue();
    blocking.release();
  }

  /** Whether the lock could be taken now; if it could, it is given back at once. */
  static boolean isFree(DistributedLock lock) {
    return lock.tryAcquire()
        .map(
            lease -> {
              lease.release();
              return true;
            })
        .orElse(false);
  }
}
