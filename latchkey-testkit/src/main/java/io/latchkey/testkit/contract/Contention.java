package io.latchkey.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.Latchkey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Shared by the suites that make threads of several clients contend, and by those that check that a
 * waiter is still waiting.
 */
final class Contention {
  /** How long a waiter must stay blocked before the suite believes it is really waiting. */
  static final Duration SETTLE = Duration.ofMillis(200);

  private Contention() {}

  /** The work of one contending thread. */
  @FunctionalInterface
  interface Worker {
    /**
     * @param client the client this thread uses
     * @param thread the thread's index within its client
     * @throws Exception fails the test
     */
    void run(Latchkey client, int thread) throws Exception;
  }

  /**
   * Runs {@code worker} on {@code threadsPerClient} threads per client, all started together, and
   * waits for every one of them.
   *
   * @param pool a pool of at least {@code clients.size() * threadsPerClient} threads
   * @param timeout the bound on the whole run: a deadlock or a lost wake-up fails instead of
   *     hanging
   * @throws AssertionError with the first failure of a worker, or when the run timed out
   */
  static void run(
      ExecutorService pool,
      List<Latchkey> clients,
      int threadsPerClient,
      Duration timeout,
      Worker worker)
      throws InterruptedException {
    CountDownLatch start = new CountDownLatch(1);
    List<Future<?>> running = new ArrayList<>();
    for (Latchkey client : clients) {
      for (int t = 0; t < threadsPerClient; t++) {
        int thread = t;
        running.add(
            pool.submit(
                () -> {
                  start.await();
                  worker.run(client, thread);
                  return null;
                }));
      }
    }
    start.countDown();
    long deadline = System.nanoTime() + timeout.toNanos();
    for (Future<?> future : running) {
      try {
        future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (ExecutionException e) {
        running.forEach(other -> other.cancel(true));
        throw new AssertionError("a contending thread failed: " + e.getCause(), e.getCause());
      } catch (TimeoutException e) {
        running.forEach(other -> other.cancel(true));
        throw new AssertionError(
            "contending threads did not finish within "
                + timeout
                + ": a deadlock, or a waiter that missed a free slot",
            e);
      }
    }
  }

  /**
   * Asserts that {@code future} completes normally within {@code within}.
   *
   * @return its value
   */
  static <T> T succeeded(Future<T> future, Duration within)
      throws InterruptedException, ExecutionException {
    assertThat(future).succeedsWithin(within);
    return future.get();
  }

  /**
   * Checks that {@code waiter} stays blocked for {@link #SETTLE}, so that what the test does next
   * happens while it waits.
   *
   * @param what names the waiter in the failure message
   */
  static void assertStillWaiting(String what, Future<?> waiter) {
    assertStillWaiting(what, List.of(waiter));
  }

  /**
   * Checks that none of {@code waiters} finishes within {@link #SETTLE}.
   *
   * @param what names the waiters in the failure message
   */
  static void assertStillWaiting(String what, List<? extends Future<?>> waiters) {
    await(what + " keeps waiting")
        .pollInterval(Duration.ofMillis(20))
        .during(SETTLE)
        .atMost(SETTLE.multipliedBy(10))
        .until(() -> waiters.stream().noneMatch(Future::isDone));
  }
}
