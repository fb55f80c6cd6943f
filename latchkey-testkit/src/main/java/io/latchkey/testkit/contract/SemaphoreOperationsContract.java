package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Contention.assertStillWaiting;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedSemaphore;
import io.latchkey.Feature;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import io.latchkey.testkit.RequiresMissingFeature;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * Conformance: the semaphore operations beyond taking and returning permits.
 *
 * <ul>
 *   <li>{@link #untimedAcquireWaitsForAsLongAsItTakes}: {@code acquire(n)} and {@code
 *       acquireAsync(n)} wait without a bound and take the permits once another client releases
 *       them; an interrupted {@code acquire(n)} takes nothing.
 *   <li>{@link #drainTakesEveryAvailablePermit}: {@code drainPermits} takes all available permits
 *       at once and answers how many; with none (or a debt) it takes nothing.
 *   <li>{@link #setPermitsSetsTheCountAndWakesWaiters}: {@code setPermits} replaces the count
 *       whatever it was, and a waiter takes permits set while it waits.
 *   <li>{@link #deleteForgetsTheRecordAndReleaseIfExistsDoesNotBringItBack}: {@code delete} answers
 *       whether the record existed; afterwards {@code isExists} is false, there are no permits, and
 *       {@code releaseIfExists} changes nothing, while before it returned permits.
 *   <li>{@link #refusedWithoutDrainAndSet} and {@link #refusedWithoutDeleteRecords}: a backend
 *       without those features refuses each call with {@link UnsupportedFeatureException}.
 * </ul>
 */
public abstract class SemaphoreOperationsContract extends ContractSupport {
  private static final Duration LONG_WAIT = Duration.ofSeconds(10);

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  public void untimedAcquireWaitsForAsLongAsItTakes() throws Exception {
    String name = uniqueName("semaphore-untimed");
    DistributedSemaphore semaphore = client().semaphore(name);
    semaphore.trySetPermits(0);
    DistributedSemaphore other = newClient().semaphore(name);

    Future<?> waiter =
        executor(1)
            .submit(
                () -> {
                  semaphore.acquire(2);
                  return null;
                });
    CompletableFuture<Void> asyncWaiter = other.acquireAsync(1).toCompletableFuture();
    assertStillWaiting("untimed acquire of 2 permits", waiter);
    assertThat(asyncWaiter).isNotDone();

    other.release(3);
    assertThat(waiter).succeedsWithin(LONG_WAIT);
    assertThat(asyncWaiter).succeedsWithin(LONG_WAIT);
    assertThat(semaphore.availablePermits()).isZero();

    AtomicReference<Thread> waiterThread = new AtomicReference<>();
    Future<Throwable> interrupted =
        executor(1)
            .submit(
                () -> {
                  waiterThread.set(Thread.currentThread());
                  try {
                    semaphore.acquire(1);
                    return new AssertionError("acquired although interrupted");
                  } catch (InterruptedException expected) {
                    return expected;
                  }
                });
    assertStillWaiting("untimed acquire", interrupted);
    Objects.requireNonNull(waiterThread.get(), "the waiter has not started").interrupt();
    assertThat(interrupted).succeedsWithin(LONG_WAIT).isInstanceOf(InterruptedException.class);
    other.release(1);
    Awaiting.throughout(Contention.SETTLE).until(() -> semaphore.availablePermits() == 1);
  }

  @Test
  @RequiresFeature({Feature.SEMAPHORE, Feature.DRAIN_AND_SET_PERMITS})
  public void drainTakesEveryAvailablePermit() {
    String name = uniqueName("semaphore-drain");
    DistributedSemaphore semaphore = client().semaphore(name);
    assertThat(semaphore.drainPermits()).as("a semaphore never set").isZero();
    semaphore.trySetPermits(5);
    assertThat(semaphore.tryAcquire(2)).isTrue();

    assertThat(newClient().semaphore(name).drainPermits()).isEqualTo(3);
    assertThat(semaphore.availablePermits()).isZero();
    assertThat(semaphore.drainPermits()).isZero();

    semaphore.addPermits(-2);
    assertThat(semaphore.drainPermits()).as("a debt is not drained").isZero();
    assertThat(semaphore.availablePermits()).isEqualTo(-2);
  }

  @Test
  @RequiresFeature({Feature.SEMAPHORE, Feature.DRAIN_AND_SET_PERMITS})
  public void setPermitsSetsTheCountAndWakesWaiters() throws Exception {
    String name = uniqueName("semaphore-set-permits");
    DistributedSemaphore semaphore = client().semaphore(name);
    semaphore.setPermits(4);
    assertThat(semaphore.availablePermits()).isEqualTo(4);
    assertThat(semaphore.trySetPermits(9)).as("setPermits created the record").isFalse();
    semaphore.setPermits(1);
    assertThat(semaphore.availablePermits()).isEqualTo(1);
    semaphore.setPermits(0);

    DistributedSemaphore other = newClient().semaphore(name);
    Future<Boolean> waiter = executor(1).submit(() -> other.tryAcquire(2, LONG_WAIT));
    assertStillWaiting("a waiter for 2 permits", waiter);
    semaphore.setPermits(2);
    assertThat(waiter).succeedsWithin(LONG_WAIT).isEqualTo(true);
    assertThat(semaphore.availablePermits()).isZero();
    assertThatThrownBy(() -> semaphore.setPermits(-1)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  @RequiresFeature({Feature.SEMAPHORE, Feature.DELETE_RECORDS})
  public void deleteForgetsTheRecordAndReleaseIfExistsDoesNotBringItBack() {
    String name = uniqueName("semaphore-delete");
    DistributedSemaphore semaphore = client().semaphore(name);
    DistributedSemaphore other = newClient().semaphore(name);
    assertThat(semaphore.isExists()).isFalse();
    assertThat(semaphore.releaseIfExists(1)).as("never set").isFalse();
    assertThat(semaphore.isExists()).isFalse();
    assertThat(semaphore.delete()).as("nothing to delete").isFalse();

    semaphore.trySetPermits(2);
    assertThat(other.isExists()).isTrue();
    assertThat(semaphore.tryAcquire(2)).isTrue();
    assertThat(other.releaseIfExists(1)).isTrue();
    assertThat(semaphore.availablePermits()).isEqualTo(1);

    assertThat(other.delete()).isTrue();
    assertThat(semaphore.isExists()).isFalse();
    assertThat(semaphore.availablePermits()).isZero();
    assertThat(semaphore.releaseIfExists(1)).as("a release after the clean-up").isFalse();
    assertThat(semaphore.isExists()).as("not brought back").isFalse();
    assertThat(semaphore.trySetPermits(3)).as("set again from scratch").isTrue();
    assertThat(other.availablePermits()).isEqualTo(3);
    assertThat(semaphore.delete()).isTrue();
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  @RequiresMissingFeature(Feature.DRAIN_AND_SET_PERMITS)
  public void refusedWithoutDrainAndSet() {
    DistributedSemaphore semaphore = client().semaphore(uniqueName("semaphore-no-drain"));
    assertRefused(semaphore::drainPermits, Feature.DRAIN_AND_SET_PERMITS);
    assertRefused(() -> semaphore.setPermits(1), Feature.DRAIN_AND_SET_PERMITS);
  }

  @Test
  @RequiresFeature(Feature.SEMAPHORE)
  @RequiresMissingFeature(Feature.DELETE_RECORDS)
  public void refusedWithoutDeleteRecords() {
    DistributedSemaphore semaphore = client().semaphore(uniqueName("semaphore-no-delete"));
    assertRefused(semaphore::delete, Feature.DELETE_RECORDS);
    assertRefused(semaphore::isExists, Feature.DELETE_RECORDS);
    assertRefused(() -> semaphore.releaseIfExists(1), Feature.DELETE_RECORDS);
  }

  static void assertRefused(ThrowingCallable call, Feature feature) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            UnsupportedFeatureException.class, e -> assertThat(e.feature()).isEqualTo(feature))
        .hasMessageContaining(feature.name());
  }
}
