package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Contention.assertStillWaiting;
import static io.latchkey.testkit.contract.SemaphoreOperationsContract.assertRefused;
import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedCountDownLatch;
import io.latchkey.Feature;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import io.latchkey.testkit.RequiresMissingFeature;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Conformance: the count-down latch's untimed wait and its record.
 *
 * <ul>
 *   <li>{@link #untimedAwaitWaitsUntilZero}: {@code await()} and {@code awaitAsync()} return at
 *       once for a latch never set, and otherwise when the count reaches zero.
 *   <li>{@link #deleteOpensTheLatch}: {@code delete} answers whether the latch was counting down,
 *       wakes every waiter as zero would, and {@code isExists} follows.
 *   <li>{@link #refusedWithoutDeleteRecords}: a backend without {@link Feature#DELETE_RECORDS}
 *       refuses {@code delete} with {@link UnsupportedFeatureException}.
 * </ul>
 */
public abstract class CountDownLatchOperationsContract extends ContractSupport {
  private static final Duration LONG_WAIT = Duration.ofSeconds(10);

  @Test
  @RequiresFeature(Feature.COUNT_DOWN_LATCH)
  public void untimedAwaitWaitsUntilZero() throws Exception {
    String name = uniqueName("latch-untimed");
    DistributedCountDownLatch latch = client().countDownLatch(name);
    latch.await(); // never set: open
    assertThat(latch.awaitAsync().toCompletableFuture()).succeedsWithin(LONG_WAIT);

    latch.trySetCount(2);
    DistributedCountDownLatch other = newClient().countDownLatch(name);
    Future<?> waiter =
        executor(1)
            .submit(
                () -> {
                  other.await();
                  return null;
                });
    CompletableFuture<Void> asyncWaiter = other.awaitAsync().toCompletableFuture();
    latch.countDown();
    assertStillWaiting("await with count 1", waiter);
    assertThat(asyncWaiter).isNotDone();
    latch.countDown();
    assertThat(waiter).succeedsWithin(LONG_WAIT);
    assertThat(asyncWaiter).succeedsWithin(LONG_WAIT);
  }

  @Test
  @RequiresFeature({Feature.COUNT_DOWN_LATCH, Feature.DELETE_RECORDS})
  public void deleteOpensTheLatch() throws Exception {
    String name = uniqueName("latch-delete");
    DistributedCountDownLatch latch = client().countDownLatch(name);
    assertThat(latch.isExists()).isFalse();
    assertThat(latch.delete()).isFalse();
    latch.trySetCount(5);
    assertThat(latch.isExists()).isTrue();

    DistributedCountDownLatch other = newClient().countDownLatch(name);
    Future<Boolean> waiter = executor(1).submit(() -> other.await(LONG_WAIT));
    assertStillWaiting("await with count 5", waiter);
    assertThat(latch.delete()).isTrue();
    assertThat(waiter).succeedsWithin(LONG_WAIT).isEqualTo(true);
    assertThat(other.isExists()).isFalse();
    assertThat(other.count()).isZero();
    assertThat(other.trySetCount(1)).as("set again from scratch").isTrue();
    assertThat(other.delete()).isTrue();
  }

  @Test
  @RequiresFeature(Feature.COUNT_DOWN_LATCH)
  @RequiresMissingFeature(Feature.DELETE_RECORDS)
  public void refusedWithoutDeleteRecords() {
    DistributedCountDownLatch latch = client().countDownLatch(uniqueName("latch-no-delete"));
    assertRefused(latch::delete, Feature.DELETE_RECORDS);
  }
}
