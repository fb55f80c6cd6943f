package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Contention.assertStillWaiting;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedCountDownLatch;
import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import io.latchkey.testkit.RequiresMissingFeature;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Conformance: count-down latches.
 *
 * <ul>
 *   <li>{@link #trySetCountOnlyWhileNotCounting}: a latch never set counts zero; {@code
 *       trySetCount} succeeds only when the count is zero, whichever client asks.
 *   <li>{@link #anyClientCountsDown}: each {@code countDown} of any client takes one off; at zero
 *       further count-downs do nothing.
 *   <li>{@link #awaitIsTrueAtZeroAndFalseWhenTheWaitRunsOut}: {@code await} returns true at once at
 *       zero, false when its wait runs out before.
 *   <li>{@link #waitersOfEveryClientWakeAtZero}: threads of several clients waiting on one latch
 *       all return true when another client counts it to zero.
 *   <li>{@link #canBeSetAgainAfterReachingZero}: a latch that reached zero can be set and awaited
 *       again.
 *   <li>{@link #awaitAsyncCompletesAtZero}: the async form completes true at zero and false when
 *       its wait runs out.
 *   <li>{@link #countDownLatchIsRefusedWithoutTheFeature}: a backend without {@link
 *       Feature#COUNT_DOWN_LATCH} refuses {@code countDownLatch(...)}.
 * </ul>
 */
public abstract class CountDownLatchContract extends ContractSupport {
  private static final Duration LONG_WAIT = Duration.ofSeconds(10);
  private static final Duration SHORT_WAIT = Duration.ofMillis(200);

  @Test
  @RequiresFeature(Feature.COUNT_DOWN_LATCH)
  public void trySetCountOnlyWhileNotCounting() {
    String name = uniqueName("latch-set");
    DistributedCountDownLatch mine = client().countDownLatch(name);
    DistributedCountDownLatch theirs = newClient().countDownLatch(name);

    assertThat(mine.count()).as("a latch never set").isZero();
    assertThat(mine.trySetCount(2)).isTrue();
    assertThat(theirs.trySetCount(5)).as("set while counting, other client").isFalse();
    assertThat(mine.trySetCount(1)).as("set while counting, same client").isFalse();
    assertThat(theirs.count()).isEqualTo(2);
  }

  @Test
  @RequiresFeature(Feature.COUNT_DOWN_LATCH)
  public void anyClientCountsDown() {
    String name = uniqueName("latch-count-down");
    List<DistributedCountDownLatch> views =
        List.of(
            client().countDownLatch(name),
            newClient().countDownLatch(name),
            newClient().countDownLatch(name));
    views.get(0).trySetCount(3);

    views.get(1).countDown();
    assertThat(views.get(0).count()).isEqualTo(2);
    views.get(2).countDown();
    assertThat(views.get(1).count()).isEqualTo(1);
    views.get(0).countDown();
    assertThat(views.get(2).count()).isZero();
    views.get(1).countDown();
    assertThat(views.get(0).count()).as("counting down at zero does nothing").isZero();
  }

  @Test
  @RequiresFeature(Feature.COUNT_DOWN_LATCH)
  public void awaitIsTrueAtZeroAndFalseWhenTheWaitRunsOut() throws InterruptedException {
    String name = uniqueName("latch-await");
    DistributedCountDownLatch latch = client().countDownLatch(name);
    DistributedCountDownLatch other = newClient().countDownLatch(name);

    assertThat(latch.await(Duration.ZERO)).as("a latch never set is open").isTrue();
    latch.trySetCount(1);
    assertThat(other.await(SHORT_WAIT)).isFalse();
    assertThat(other.await(Duration.ZERO)).isFalse();
    assertThat(latch.count()).as("awaiting does not count down").isEqualTo(1);
    latch.countDown();
    assertThat(other.await(Duration.ZERO)).isTrue();
    assertThat(other.await(SHORT_WAIT)).isTrue();
  }

  @Test
  @RequiresFeature(Feature.COUNT_DOWN_LATCH)
  public void waitersOfEveryClientWakeAtZero() throws Exception {
    String name = uniqueName("latch-wake");
    int threadsPerClient = 2;
    List<Latchkey> waitingClients = List.of(client(), newClient(), newClient());
    client().countDownLatch(name).trySetCount(2);
    ExecutorService pool = executor(waitingClients.size() * threadsPerClient);

    List<Future<Boolean>> waiters = new ArrayList<>();
    for (Latchkey latchkey : waitingClients) {
      DistributedCountDownLatch latch = latchkey.countDownLatch(name);
      for (int t = 0; t < threadsPerClient; t++) {
        waiters.add(pool.submit(() -> latch.await(LONG_WAIT)));
      }
    }
    DistributedCountDownLatch counter = newClient().countDownLatch(name);
    counter.countDown();
    assertStillWaiting("await with count 1", waiters);
    counter.countDown();

    for (Future<Boolean> waiter : waiters) {
      assertThat(waiter).succeedsWithin(LONG_WAIT).isEqualTo(true);
    }
  }

  @Test
  @RequiresFeature(Feature.COUNT_DOWN_LATCH)
  public void canBeSetAgainAfterReachingZero() throws InterruptedException {
    String name = uniqueName("latch-again");
    DistributedCountDownLatch latch = client().countDownLatch(name);
    latch.trySetCount(1);
    latch.countDown();
    assertThat(latch.await(Duration.ZERO)).isTrue();

    DistributedCountDownLatch other = newClient().countDownLatch(name);
    assertThat(other.trySetCount(2)).isTrue();
    assertThat(latch.count()).isEqualTo(2);
    assertThat(latch.await(SHORT_WAIT)).isFalse();
    other.countDown();
    other.countDown();
    assertThat(latch.await(LONG_WAIT)).isTrue();
  }

  @Test
  @RequiresFeature(Feature.COUNT_DOWN_LATCH)
  public void awaitAsyncCompletesAtZero() {
    String name = uniqueName("latch-async");
    DistributedCountDownLatch latch = client().countDownLatch(name);
    latch.trySetCount(1);
    DistributedCountDownLatch other = newClient().countDownLatch(name);

    assertThat(other.awaitAsync(SHORT_WAIT)).succeedsWithin(LONG_WAIT).isEqualTo(false);
    CompletableFuture<Boolean> waiting = other.awaitAsync(LONG_WAIT).toCompletableFuture();
    assertStillWaiting("awaitAsync with count 1", waiting);
    latch.countDown();
    assertThat(waiting).succeedsWithin(LONG_WAIT).isEqualTo(true);
    assertThat(latch.awaitAsync(Duration.ZERO)).succeedsWithin(LONG_WAIT).isEqualTo(true);
  }

  @Test
  @RequiresMissingFeature(Feature.COUNT_DOWN_LATCH)
  public void countDownLatchIsRefusedWithoutTheFeature() {
    assertThatThrownBy(() -> client().countDownLatch(uniqueName("latch-missing")))
        .isInstanceOfSatisfying(
            UnsupportedFeatureException.class,
            e -> assertThat(e.feature()).isEqualTo(Feature.COUNT_DOWN_LATCH))
        .hasMessageContaining("COUNT_DOWN_LATCH");
  }
}
