package io.latchkey.internal;

import io.latchkey.Ticker;
import io.latchkey.spi.ResourceType;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The one waiting loop of the engine, shared by every primitive: try; if busy, subscribe to
 * wake-ups and try again (a release may have happened before the subscription was active); then
 * sleep until a wake-up, the backend's "retry when" (a watch), the holder's lease end, the re-check
 * bound or the deadline, and try again. Every sleep is a task on the client's scheduler.
 *
 * <p>The result completes with the granted value, or with null when the wait ran out. If the result
 * is cancelled (an interrupted caller) while an attempt is on the wire and that attempt is granted,
 * the grant goes to {@link Strategy#compensate} so that nothing stays held that nobody knows of.
 * Whatever the ending, {@link Strategy#abandon} runs if nothing was granted (a waiter leaves the
 * queue) and the waiter leaves its channel.
 *
 * @param <T> what a grant yields
 */
final class Acquisition<T> {
  /**
   * One attempt's answer: a value when granted, else the time after which to re-check and,
   * optionally, a stage that completes when it is worth trying again.
   */
  record Attempt<T>(
      @Nullable T value,
      long retryAfterMillis,
      @Nullable CompletionStage<?> retryWhen,
      boolean retryAtOnce) {
    static <T> Attempt<T> granted(T value) {
      return new Attempt<>(value, -1, null, false);
    }

    static <T> Attempt<T> busy(long retryAfterMillis) {
      return new Attempt<>(null, retryAfterMillis, null, false);
    }

    static <T> Attempt<T> busy(long retryAfterMillis, @Nullable CompletionStage<?> retryWhen) {
      return new Attempt<>(null, retryAfterMillis, retryWhen, false);
    }

    /**
     * The backend granted, but the engine gave the grant back (it came too late to use, or it
     * re-entered holds given up before): the acquisition tries once more at once, even a try that
     * does not wait, since nobody else holds what it asked for.
     */
    static <T> Attempt<T> undone() {
      return new Attempt<>(null, 0, null, true);
    }
  }

  /**
   * What is waited for: the resource, the waiter's owner (for wake-ups aimed at one owner) and
   * mode, how long to wait (below zero: for ever) and the longest sleep between checks.
   */
  record WaitPlan(
      ResourceType type,
      String name,
      @Nullable String owner,
      boolean shared,
      long waitNanos,
      long maxSleepNanos) {
    /**
     * A wait for a resource whose waiters have no owner (semaphores, latches): woken by any
     * wake-up, re-checking at least every re-check interval.
     */
    static WaitPlan ownerless(
        ResourceType type,
        String name,
        boolean shared,
        long waitNanos,
        io.latchkey.LatchkeyOptions options) {
      return new WaitPlan(type, name, null, shared, waitNanos, options.recheckInterval().toNanos());
    }
  }

  /** How one primitive tries, undoes a grant nobody took, and gives up. */
  interface Strategy<T> {
    /** One attempt on the backend. */
    CompletableFuture<Attempt<T>> attempt();

    /** A grant that arrived after the caller gave up: undo it. */
    void compensate(T granted);

    /** Nothing was granted and the wait is over (e.g. leave the wait queue). */
    default void abandon() {}

    /**
     * @return a strategy with nothing to do when abandoned
     */
    static <T> Strategy<T> of(
        Supplier<CompletableFuture<Attempt<T>>> attempt, Consumer<T> compensate) {
      return new Strategy<>() {
        @Override
        public CompletableFuture<Attempt<T>> attempt() {
          return attempt.get();
        }

        @Override
        public void compensate(T granted) {
          compensate.accept(granted);
        }
      };
    }
  }

  private static final long MIN_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private final LatchkeyClient client;
  private final WaitPlan plan;
  private final Strategy<T> strategy;
  private final long deadline;
  private final boolean forever;
  private final long maxSleepNanos;
  private final CompletableFuture<@Nullable T> result = new CompletableFuture<>();
  private final Ticker ticker;
  private volatile WaitChannels.@Nullable Waiter waiter;
  private int rounds;
  private volatile boolean triedAgainAtOnce;

  Acquisition(LatchkeyClient client, WaitPlan plan, Strategy<T> strategy) {
    this.client = client;
    this.plan = plan;
    this.strategy = strategy;
    this.ticker = client.options().ticker();
    this.forever = plan.waitNanos() < 0;
    this.deadline = ticker.nanoTime() + Math.max(0, plan.waitNanos());
    this.maxSleepNanos = plan.maxSleepNanos();
  }

  /**
   * Starts the loop; waitNanos below zero waits forever. An attempt that is granted at once (the
   * uncontended case, on a backend that answered synchronously) returns without setting up any of
   * the waiting machinery.
   */
  // Handler futures left unread on purpose: the handlers route every outcome into the result
  // themselves.
  @SuppressWarnings("FutureReturnValueIgnored")
  CompletableFuture<@Nullable T> start() {
    CompletableFuture<Attempt<T>> first = attemptOnce();
    if (first.isDone() && !first.isCompletedExceptionally()) {
      T granted = first.join().value();
      if (granted != null) {
        return CompletableFuture.completedFuture(granted);
      }
    }
    result.whenComplete((value, failure) -> finish(value != null && failure == null));
    handle(first, null);
    return result;
  }

  private void tryOnce() {
    if (result.isDone()) {
      return;
    }
    WaitChannels.Waiter joined = waiter;
    CompletableFuture<Void> signal = joined == null ? null : client.waitChannels().arm(joined);
    handle(attemptOnce(), signal);
  }

  private CompletableFuture<Attempt<T>> attemptOnce() {
    try {
      return strategy.attempt();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  // Handler futures left unread on purpose: the handlers route every outcome into the result
  // themselves.
  @SuppressWarnings("FutureReturnValueIgnored")
  private void handle(
      CompletableFuture<Attempt<T>> answer, @Nullable CompletableFuture<Void> signal) {
    answer.whenComplete(
        (outcome, failure) -> {
          if (failure != null) {
            result.completeExceptionally(BackendCalls.unwrap(failure));
          } else if (outcome.value() != null) {
            if (!result.complete(outcome.value())) {
              strategy.compensate(outcome.value());
            }
          } else if (outcome.retryAtOnce() && !triedAgainAtOnce) {
            triedAgainAtOnce = true;
            handle(attemptOnce(), signal);
          } else {
            onBusy(outcome, signal);
          }
        });
  }

  // Handler futures left unread on purpose: the handlers route every outcome into the result
  // themselves.
  @SuppressWarnings("FutureReturnValueIgnored")
  private void onBusy(Attempt<T> outcome, @Nullable CompletableFuture<Void> signal) {
    long remaining = forever ? Long.MAX_VALUE : deadline - ticker.nanoTime();
    if (remaining <= 0) {
      result.complete(null);
      return;
    }
    if (waiter == null || signal == null) {
      WaitChannels.Waiter joined =
          client.waitChannels().join(plan.type(), plan.name(), plan.owner(), plan.shared());
      waiter = joined;
      if (result.isDone()) {
        client.waitChannels().leave(joined, false);
        return;
      }
      joined
          .ready()
          .whenComplete(
              (ok, failure) -> {
                if (failure != null) {
                  result.completeExceptionally(BackendCalls.unwrap(failure));
                } else {
                  tryOnce();
                }
              });
      return;
    }
    long sleep = Math.min(sleepBound(outcome.retryWhen() != null), remaining);
    if (outcome.retryAfterMillis() >= 0) {
      // The holder's lease ends then; an expiry publishes nothing, so look again at that moment.
      sleep = Math.min(sleep, TimeUnit.MILLISECONDS.toNanos(outcome.retryAfterMillis() + 1));
    }
    rounds++;
    CompletionStage<?> watch = outcome.retryWhen();
    if (watch != null) {
      watch.whenComplete((fired, failure) -> signal.complete(null));
    }
    try {
      ScheduledFuture<?> timer =
          client
              .scheduler()
              .schedule(() -> signal.complete(null), Math.max(sleep, 0), TimeUnit.NANOSECONDS);
      signal.whenComplete((ok, failure) -> timer.cancel(false));
    } catch (RejectedExecutionException closed) {
      result.completeExceptionally(new IllegalStateException("this latchkey client is closed"));
      return;
    }
    signal.thenRun(this::tryOnce);
  }

  /**
   * With push wake-ups the sleep is bounded only by the re-check interval. Without, waiters poll
   * with a back-off that doubles from 5 ms up to that interval, with full jitter so that pollers do
   * not march in step.
   */
  private long sleepBound(boolean watched) {
    if (watched || client.hasPushWakeups()) {
      return maxSleepNanos;
    }
    long backoff = MIN_POLL_NANOS << Math.min(rounds, 20);
    long cap = Math.min(backoff, maxSleepNanos);
    return MIN_POLL_NANOS / 2 + ThreadLocalRandom.current().nextLong(Math.max(1, cap));
  }

  private void finish(boolean granted) {
    WaitChannels.Waiter joined = waiter;
    if (joined != null) {
      client.waitChannels().leave(joined, granted);
    }
    if (!granted) {
      strategy.abandon();
    }
  }
}
