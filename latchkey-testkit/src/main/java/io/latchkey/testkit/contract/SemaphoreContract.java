package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Contention.assertStillWaiting;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedSemaphore;
import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.LockTimeoutException;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import io.latchkey.testkit.RequiresMissingFeature;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Conformance: counting semaphore accounting.
 *
 * <ul>
 *   <li>{@link #trySetPermitsSetsTheInitialNumberOnlyOnce}: the first {@code trySetPermits} wins,
 *       for every client; a semaphore never set has no permits.
 *   <li>{@link #acquireAndTryAcquireTakeExactlyTheAskedPermits}: {@code tryAcquire(n)} and {@code
 *       acquire(n, wait)} take n permits or none, and {@code availablePermits} follows.
 *   <li>{@link #anyClientMayRelease}: permits have no owner; another client's release returns them
 *       (even beyond the initial number).
 *   <li>{@link #waiterWakesWhenAnotherClientReleases}: a blocked {@code acquire} succeeds once
 *       another client releases.
 *   <li>{@link #waiterForSeveralPermitsTakesThemAllAtOnce}: a waiter for n permits takes none until
 *       n are free.
 *   <li>{@link #neverMoreHoldersThanPermitsUnderContention}: threads of three clients are never
 *       more than N inside at once, and every permit is back at the end.
 *   <li>{@link #addPermitsAddsAndRemovesUnconditionally}: positive and negative deltas change the
 *       count; removing more than is available leaves a debt that later releases repay.
 *   <li>{@link #addPermitsRefusesACountOutOfTheRangeOfAnInt}: {@code addPermits} and {@code
 *       release} that would take the count past {@link Integer#MAX_VALUE} or below {@link
 *       Integer#MIN_VALUE} throw {@link IllegalArgumentException} and change nothing.
 *   <li>{@link #addPermitsWakesWaiters}: permits added while a client waits are taken by it.
 *   <li>{@link #timeoutTakesNothing}: a wait that runs out returns false or throws {@link
 *       LockTimeoutException}, and takes no permit.
 *   <li>{@link #acquireAsyncCompletesWhenPermitsAreReleased}: the async form waits, completes on
 *       release, and fails with {@link LockTimeoutException} when its wait runs out.
 *   <li>{@link #interruptedAcquireTakesNothing}: a waiter interrupted while waiting throws {@link
 *       InterruptedException} and does not take the permits released afterwards.
 *   <li>{@link #cancelledAcquireAsyncTakesNothing}: cancelling the stage of {@code acquireAsync}
 *       abandons the wait; permits released afterwards stay available.
 *   <li>{@link #semaphoreIsRefusedWithoutTheFeature}: a backend without {@link Feature#SEMAPHORE}
 *       refuses {@code semaphore(...)} with {@link UnsupportedFeatureException}.
 * </ul>
 */
public abstract class SemaphoreContract extends ContractSupport {
  private static final Duration LONG_WAIT = Duration.ofSeconds(10);
  private static final Duration SHORT_WAIT = Duration.ofMillis(200);

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  public void trySetPermitsSetsTheInitialNumberOnlyOnce() {
    String name = uniqueName("semaphore-set");
    DistributedSemaphore mine = client().semaphore(name);
    DistributedSemaphore theirs = newClient().semaphore(name);

    assertThat(mine.availablePermits()).as("a semaphore never set has no permits").isZero();
    assertThat(mine.tryAcquire(1)).as("a semaphore never set has no permits").isFalse();
    assertThat(mine.trySetPermits(3)).isTrue();
    assertThat(theirs.trySetPermits(5)).as("second trySetPermits, other client").isFalse();
    assertThat(mine.trySetPermits(7)).as("second trySetPermits, same client").isFalse();
    assertThat(theirs.availablePermits()).isEqualTo(3);
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  public void acquireAndTryAcquireTakeExactlyTheAskedPermits() throws InterruptedException {
    DistributedSemaphore semaphore = client().semaphore(uniqueName("semaphore-count"));
    semaphore.trySetPermits(5);

    assertThat(semaphore.tryAcquire(2)).isTrue();
    assertThat(semaphore.availablePermits()).isEqualTo(3);
    semaphore.acquire(3, LONG_WAIT);
    assertThat(semaphore.availablePermits()).isZero();
    assertThat(semaphore.tryAcquire(1)).isFalse();

    semaphore.release(4);
    assertThat(semaphore.availablePermits()).isEqualTo(4);
    assertThat(semaphore.tryAcquire(5)).as("5 of 4 permits: all or none").isFalse();
    assertThat(semaphore.availablePermits()).as("a refused tryAcquire takes nothing").isEqualTo(4);
    assertThat(semaphore.tryAcquire(4, Duration.ZERO)).isTrue();
    assertThat(semaphore.availablePermits()).isZero();
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  public void anyClientMayRelease() {
    String name = uniqueName("semaphore-release");
    DistributedSemaphore mine = client().semaphore(name);
    DistributedSemaphore theirs = newClient().semaphore(name);
    mine.trySetPermits(2);
    assertThat(mine.tryAcquire(2)).isTrue();

    theirs.release(1);
    assertThat(mine.availablePermits()).isEqualTo(1);
    assertThat(theirs.tryAcquire(1)).isTrue();
    assertThat(mine.availablePermits()).isZero();

    theirs.release(2);
    mine.release(1);
    assertThat(theirs.availablePermits())
        .as("releases are not capped at the initial number")
        .isEqualTo(3);
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  public void waiterWakesWhenAnotherClientReleases() throws Exception {
    String name = uniqueName("semaphore-wake");
    DistributedSemaphore holder = client().semaphore(name);
    holder.trySetPermits(1);
    assertThat(holder.tryAcquire(1)).isTrue();
    DistributedSemaphore waiting = newClient().semaphore(name);
    ExecutorService pool = executor(1);

    Future<?> waiter =
        pool.submit(
            () -> {
              waiting.acquire(1, LONG_WAIT);
              return null;
            });
    assertStillWaiting("acquire on an empty semaphore", waiter);
    holder.release(1);

    assertThat(waiter).succeedsWithin(LONG_WAIT);
    assertThat(holder.availablePermits()).as("the waiter took the released permit").isZero();
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  public void waiterForSeveralPermitsTakesThemAllAtOnce() throws Exception {
    String name = uniqueName("semaphore-several");
    DistributedSemaphore holder = client().semaphore(name);
    holder.trySetPermits(2);
    assertThat(holder.tryAcquire(2)).isTrue();
    DistributedSemaphore waiting = newClient().semaphore(name);
    ExecutorService pool = executor(1);

    Future<Boolean> waiter = pool.submit(() -> waiting.tryAcquire(2, LONG_WAIT));
    assertStillWaiting("tryAcquire(2) on an empty semaphore", waiter);
    holder.release(1);
    assertStillWaiting("tryAcquire(2) with one permit free", waiter);
    assertThat(holder.availablePermits())
        .as("a waiter for two permits takes none while only one is free")
        .isEqualTo(1);
    holder.release(1);

    assertThat(waiter).succeedsWithin(LONG_WAIT).isEqualTo(true);
    assertThat(holder.availablePermits()).isZero();
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  public void neverMoreHoldersThanPermitsUnderContention() throws InterruptedException {
    String name = uniqueName("semaphore-contention");
    int permits = 2;
    int threadsPerClient = 3;
    int rounds = 20;
    client().semaphore(name).trySetPermits(permits);
    List<Latchkey> clients = List.of(client(), newClient(), newClient());
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger mostInside = new AtomicInteger();

    Contention.run(
        executor(clients.size() * threadsPerClient),
        clients,
        threadsPerClient,
        Duration.ofSeconds(60),
        (latchkey, thread) -> {
          DistributedSemaphore semaphore = latchkey.semaphore(name);
          for (int i = 0; i < rounds; i++) {
            semaphore.acquire(1, Duration.ofSeconds(30));
            try {
              mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
              Thread.yield();
              inside.decrementAndGet();
            } finally {
              semaphore.release(1);
            }
          }
        });

    assertThat(mostInside.get()).as("most holders at once").isBetween(1, permits);
    assertThat(client().semaphore(name).availablePermits()).isEqualTo(permits);
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  public void addPermitsRefusesACountOutOfTheRangeOfAnInt() {
    String name = uniqueName("semaphore-overflow");
    DistributedSemaphore semaphore = client().semaphore(name);
    DistributedSemaphore other = newClient().semaphore(name);
    assertThat(semaphore.trySetPermits(Integer.MAX_VALUE - 1)).isTrue();

    assertThatThrownBy(() -> other.addPermits(2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(name);
    assertThatThrownBy(() -> other.release(Integer.MAX_VALUE))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(semaphore.availablePermits()).as("nothing changed").isEqualTo(Integer.MAX_VALUE - 1);
    other.addPermits(1);
    assertThat(semaphore.availablePermits()).isEqualTo(Integer.MAX_VALUE);

    DistributedSemaphore indebted = client().semaphore(uniqueName("semaphore-underflow"));
    indebted.addPermits(Integer.MIN_VALUE + 1);
    assertThatThrownBy(() -> indebted.addPermits(-2)).isInstanceOf(IllegalArgumentException.class);
    indebted.addPermits(-1);
    assertThat(indebted.availablePermits()).isEqualTo(Integer.MIN_VALUE);
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  public void addPermitsAddsAndRemovesUnconditionally() {
    String name = uniqueName("semaphore-add");
    DistributedSemaphore semaphore = client().semaphore(name);
    DistributedSemaphore other = newClient().semaphore(name);
    semaphore.trySetPermits(2);

    semaphore.addPermits(3);
    assertThat(other.availablePermits()).isEqualTo(5);
    other.addPermits(-4);
    assertThat(semaphore.availablePermits()).isEqualTo(1);

    semaphore.addPermits(-2);
    assertThat(semaphore.availablePermits())
        .as("removing more permits than are available")
        .isLessThanOrEqualTo(0);
    assertThat(other.tryAcquire(1)).as("no permit while in debt").isFalse();
    other.addPermits(2);
    assertThat(semaphore.availablePermits()).as("the debt of one was repaid first").isEqualTo(1);
    assertThat(semaphore.tryAcquire(1)).isTrue();

    DistributedSemaphore neverSet = client().semaphore(uniqueName("semaphore-add-unset"));
    neverSet.addPermits(2);
    assertThat(neverSet.availablePermits()).isEqualTo(2);
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  public void addPermitsWakesWaiters() throws Exception {
    String name = uniqueName("semaphore-add-wake");
    client().semaphore(name).trySetPermits(0);
    DistributedSemaphore first = newClient().semaphore(name);
    DistributedSemaphore second = newClient().semaphore(name);
    ExecutorService pool = executor(2);

    Future<?> one =
        pool.submit(
            () -> {
              first.acquire(1, LONG_WAIT);
              return null;
            });
    Future<?> two =
        pool.submit(
            () -> {
              second.acquire(1, LONG_WAIT);
              return null;
            });
    assertStillWaiting("two acquires on an empty semaphore", List.of(one, two));
    client().semaphore(name).addPermits(2);

    assertThat(one).succeedsWithin(LONG_WAIT);
    assertThat(two).succeedsWithin(LONG_WAIT);
    assertThat(client().semaphore(name).availablePermits()).isZero();
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  public void timeoutTakesNothing() throws InterruptedException {
    String name = uniqueName("semaphore-timeout");
    DistributedSemaphore holder = client().semaphore(name);
    holder.trySetPermits(2);
    assertThat(holder.tryAcquire(1)).isTrue();
    DistributedSemaphore other = newClient().semaphore(name);

    assertThat(other.tryAcquire(2, SHORT_WAIT)).isFalse();
    assertThatThrownBy(() -> other.acquire(2, SHORT_WAIT))
        .isInstanceOf(LockTimeoutException.class)
        .hasMessageContaining(name);
    assertThatThrownBy(() -> other.acquire(2, Duration.ZERO))
        .isInstanceOf(LockTimeoutException.class);
    assertThat(holder.availablePermits()).as("timed-out acquires take nothing").isEqualTo(1);
    assertThat(other.tryAcquire(1, SHORT_WAIT)).isTrue();
    assertThat(holder.availablePermits()).isZero();
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  public void acquireAsyncCompletesWhenPermitsAreReleased() throws Exception {
    String name = uniqueName("semaphore-async");
    DistributedSemaphore holder = client().semaphore(name);
    holder.trySetPermits(1);
    assertThat(holder.tryAcquire(1)).isTrue();
    DistributedSemaphore other = newClient().semaphore(name);

    CompletableFuture<Void> waiting = other.acquireAsync(1, LONG_WAIT).toCompletableFuture();
    assertStillWaiting("acquireAsync on an empty semaphore", waiting);
    holder.releaseAsync(1).toCompletableFuture().get();
    assertThat(waiting).succeedsWithin(LONG_WAIT);
    assertThat(holder.availablePermits()).isZero();

    CompletionStage<Void> late = other.acquireAsync(1, SHORT_WAIT);
    assertThat(late)
        .failsWithin(LONG_WAIT)
        .withThrowableOfType(ExecutionException.class)
        .withCauseInstanceOf(LockTimeoutException.class);
    assertThat(holder.availablePermits()).isZero();
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  public void interruptedAcquireTakesNothing() throws Exception {
    String name = uniqueName("semaphore-interrupt");
    DistributedSemaphore holder = client().semaphore(name);
    holder.trySetPermits(1);
    assertThat(holder.tryAcquire(1)).isTrue();
    DistributedSemaphore waiting = newClient().semaphore(name);
    AtomicReference<Thread> waiterThread = new AtomicReference<>();

    Future<Throwable> waiter =
        executor(1)
            .submit(
                () -> {
                  waiterThread.set(Thread.currentThread());
                  try {
                    waiting.acquire(1, LONG_WAIT);
                    return new AssertionError("acquired although interrupted");
                  } catch (InterruptedException expected) {
                    return expected;
                  }
                });
    assertStillWaiting("acquire on an empty semaphore", waiter);
    Objects.requireNonNull(waiterThread.get(), "the waiter has not started").interrupt();
    assertThat(waiter).succeedsWithin(LONG_WAIT).isInstanceOf(InterruptedException.class);

    holder.release(1);
    assertPermitsStay(holder, 1);
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  public void cancelledAcquireAsyncTakesNothing() {
    String name = uniqueName("semaphore-async-cancel");
    DistributedSemaphore holder = client().semaphore(name);
    holder.trySetPermits(1);
    assertThat(holder.tryAcquire(1)).isTrue();
    DistributedSemaphore other = newClient().semaphore(name);

    CompletableFuture<Void> waiting = other.acquireAsync(1, LONG_WAIT).toCompletableFuture();
    assertStillWaiting("acquireAsync on an empty semaphore", waiting);
    assertThat(waiting.cancel(true)).isTrue();

    holder.release(1);
    assertPermitsStay(holder, 1);
  }

  /** The count is {@code permits} and stays so: no abandoned waiter takes them later. */
  private static void assertPermitsStay(DistributedSemaphore semaphore, int permits) {
    await("available permits stay " + permits + " (no abandoned waiter takes them)")
        .pollInterval(Duration.ofMillis(20))
        .during(Contention.SETTLE.multipliedBy(2))
        .atMost(Duration.ofSeconds(3))
        .until(() -> semaphore.availablePermits() == permits);
  }

  @Test
  @RequiresMissingFeature(Feature.SEMAPHORE)
  public void semaphoreIsRefusedWithoutTheFeature() {
    assertThatThrownBy(() -> client().semaphore(uniqueName("semaphore-missing")))
        .isInstanceOfSatisfying(
            UnsupportedFeatureException.class,
            e -> assertThat(e.feature()).isEqualTo(Feature.SEMAPHORE))
        .hasMessageContaining("SEMAPHORE");
  }
}
