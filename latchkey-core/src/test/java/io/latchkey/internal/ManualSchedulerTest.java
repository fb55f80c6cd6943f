package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.memory.ManualTicker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

// Scheduling tests keep only the futures they look at.
@SuppressWarnings("FutureReturnValueIgnored")
class ManualSchedulerTest {
  private final ManualTicker ticker = new ManualTicker();
  private final ManualScheduler scheduler = new ManualScheduler(ticker);
  private final long start = ticker.nanoTime();
  private final List<String> ran = new CopyOnWriteArrayList<>();

  /** Milliseconds since the test started, by the manual clock. */
  private long elapsedMillis() {
    return TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime() - start);
  }

  private Runnable log(String name) {
    return () -> ran.add(name + "@" + elapsedMillis());
  }

  @Test
  void runsNothingUntilTheClockMovesAndThenEachTaskAtItsDueTime() {
    scheduler.schedule(log("b"), 20, TimeUnit.MILLISECONDS);
    scheduler.schedule(log("a"), 10, TimeUnit.MILLISECONDS);
    scheduler.schedule(log("c"), 20, TimeUnit.MILLISECONDS);
    assertThat(ran).isEmpty();

    scheduler.advance(Duration.ofMillis(9));
    assertThat(ran).isEmpty();
    assertThat(scheduler.nextDelay()).contains(Duration.ofMillis(1));

    scheduler.advance(Duration.ofMillis(100));
    // Due order; tasks due together in the order they were scheduled; the clock at each due time.
    assertThat(ran).containsExactly("a@10", "b@20", "c@20");
    assertThat(elapsedMillis()).isEqualTo(109);
    assertThat(scheduler.nextDelay()).isEmpty();
  }

  @Test
  void runsTasksScheduledByTasksWithinTheSameAdvance() {
    scheduler.schedule(
        () -> {
          ran.add("outer@" + elapsedMillis());
          scheduler.schedule(log("inner"), 5, TimeUnit.MILLISECONDS);
          scheduler.schedule(log("now"), 0, TimeUnit.MILLISECONDS);
          scheduler.schedule(log("later"), 50, TimeUnit.MILLISECONDS);
        },
        10,
        TimeUnit.MILLISECONDS);

    scheduler.advance(Duration.ofMillis(15));

    assertThat(ran).containsExactly("outer@10", "now@10", "inner@15");
    assertThat(scheduler.pendingTasks()).isEqualTo(1);
  }

  @Test
  void runDueRunsOverdueAndZeroDelayTasksWithoutMovingTheClock() {
    scheduler.schedule(log("negative"), -5, TimeUnit.MILLISECONDS);
    scheduler.schedule(log("zero"), 0, TimeUnit.MILLISECONDS);
    scheduler.schedule(log("later"), 1, TimeUnit.NANOSECONDS);

    scheduler.runDue();

    assertThat(ran).containsExactly("negative@0", "zero@0");
    assertThat(ticker.nanoTime()).isEqualTo(start);
  }

  @Test
  void fixedRateKeepsItsRhythmAndFixedDelayCountsFromTheEndOfARun() {
    scheduler.scheduleAtFixedRate(log("rate"), 10, 30, TimeUnit.MILLISECONDS);
    scheduler.scheduleWithFixedDelay(log("delay"), 0, 25, TimeUnit.MILLISECONDS);

    scheduler.advance(Duration.ofMillis(70));

    assertThat(ran)
        .containsExactly("delay@0", "rate@10", "delay@25", "rate@40", "delay@50", "rate@70");
  }

  @Test
  void aCancelledTaskDoesNotRunAndAPeriodicTaskStopsWhenCancelled() throws Exception {
    ScheduledFuture<?> once = scheduler.schedule(log("once"), 10, TimeUnit.MILLISECONDS);
    ScheduledFuture<?> periodic =
        scheduler.scheduleAtFixedRate(log("periodic"), 5, 5, TimeUnit.MILLISECONDS);
    assertThat(once.getDelay(TimeUnit.MILLISECONDS)).isEqualTo(10);

    assertThat(once.cancel(false)).isTrue();
    scheduler.advance(Duration.ofMillis(12));
    assertThat(periodic.cancel(false)).isTrue();
    scheduler.advance(Duration.ofMillis(100));

    assertThat(ran).containsExactly("periodic@5", "periodic@10");
    assertThat(once.isCancelled()).isTrue();
    assertThat(scheduler.pendingTasks()).isZero();
  }

  @Test
  void aPeriodicTaskCanCancelItselfAndOneThatThrowsStopsWithItsFailure() {
    ScheduledFuture<?>[] self = new ScheduledFuture<?>[1];
    self[0] =
        scheduler.scheduleAtFixedRate(
            () -> {
              ran.add("self@" + elapsedMillis());
              if (elapsedMillis() >= 20) {
                self[0].cancel(false);
              }
            },
            10,
            10,
            TimeUnit.MILLISECONDS);
    ScheduledFuture<?> failing =
        scheduler.scheduleWithFixedDelay(
            () -> {
              throw new IllegalStateException("boom");
            },
            1,
            1,
            TimeUnit.MILLISECONDS);

    scheduler.advance(Duration.ofMillis(100));

    assertThat(ran).containsExactly("self@10", "self@20");
    assertThat(failing.isDone()).isTrue();
    assertThatThrownBy(failing::get)
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(IllegalStateException.class);
    assertThat(scheduler.pendingTasks()).isZero();
  }

  @Test
  void aScheduledCallableCompletesItsFuture() throws Exception {
    ScheduledFuture<String> answer =
        scheduler.schedule(() -> "at " + elapsedMillis(), 3, TimeUnit.MILLISECONDS);
    assertThat(answer.isDone()).isFalse();

    scheduler.advance(Duration.ofMillis(3));

    assertThat(answer.get()).isEqualTo("at 3");
  }

  @Test
  void executeAndSubmitRunAtOnceOnTheCallingThread() throws Exception {
    Thread caller = Thread.currentThread();
    scheduler.execute(() -> ran.add(Thread.currentThread() == caller ? "same thread" : "other"));
    Future<Integer> submitted = scheduler.submit(() -> 42);

    assertThat(ran).containsExactly("same thread");
    assertThat(submitted.isDone()).isTrue();
    assertThat(submitted.get()).isEqualTo(42);
  }

  @Test
  void tasksScheduledFromAnotherThreadRunWhenTheClockPassesThem() throws Exception {
    Thread other = new Thread(() -> scheduler.schedule(log("other"), 7, TimeUnit.MILLISECONDS));
    other.start();
    other.join();

    scheduler.advance(Duration.ofMillis(7));

    assertThat(ran).containsExactly("other@7");
  }

  @Test
  void shutdownRefusesNewTasksDropsPeriodicOnesAndLetsOneShotTasksFinish() {
    scheduler.schedule(log("once"), 10, TimeUnit.MILLISECONDS);
    ScheduledFuture<?> periodic =
        scheduler.scheduleAtFixedRate(log("periodic"), 5, 5, TimeUnit.MILLISECONDS);

    scheduler.shutdown();

    assertThat(scheduler.isShutdown()).isTrue();
    assertThat(periodic.isCancelled()).isTrue();
    assertThat(scheduler.isTerminated()).isFalse();
    assertThatThrownBy(() -> scheduler.schedule(log("new"), 1, TimeUnit.MILLISECONDS))
        .isInstanceOf(RejectedExecutionException.class);
    assertThatThrownBy(() -> scheduler.execute(log("new")))
        .isInstanceOf(RejectedExecutionException.class);

    scheduler.advance(Duration.ofMillis(20));

    assertThat(ran).containsExactly("once@10");
    assertThat(scheduler.isTerminated()).isTrue();
  }

  @Test
  void shutdownNowDropsAndReturnsEveryTask() throws Exception {
    scheduler.schedule(log("once"), 10, TimeUnit.MILLISECONDS);
    scheduler.scheduleWithFixedDelay(log("periodic"), 5, 5, TimeUnit.MILLISECONDS);

    List<Runnable> dropped = scheduler.shutdownNow();
    scheduler.advance(Duration.ofMillis(20));

    assertThat(dropped).hasSize(2);
    assertThat(ran).isEmpty();
    assertThat(scheduler.isTerminated()).isTrue();
    assertThat(scheduler.awaitTermination(1, TimeUnit.SECONDS)).isTrue();
    assertThatThrownBy(() -> scheduler.schedule(log("new"), 1, TimeUnit.MILLISECONDS))
        .isInstanceOf(RejectedExecutionException.class);
  }

  @Test
  void refusesToGoBackInTimeAndNonPositivePeriods() {
    assertThatThrownBy(() -> scheduler.advance(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> scheduler.scheduleAtFixedRate(log("x"), 0, 0, TimeUnit.MILLISECONDS))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
