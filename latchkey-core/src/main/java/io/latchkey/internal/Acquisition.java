package io.latchkey.internal;

import io.latchkey.Ticker;
import io.latchkey.spi.ResourceType;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The one waiting loop of the engine, shared by every primitive: try; if busy, subscribe to
 * wake-ups and try again (a release may have happened before the subscription was active); then
 * sleep until a wake-up, the holder's lease end, the re-check bound or the deadline, and try again.
 *
 * <p>The result completes with the granted value, or with null when the wait ran out. If the result
 * is cancelled (an interrupted caller) while an attempt is on the wire and that attempt is granted,
 * the grant is handed to {@code compensate} so that nothing stays held that nobody knows of.
 * Whatever the ending, {@code abandon} runs if nothing was granted (a fair waiter leaves the queue)
 * and the waiter leaves its channel.
 *
 * @param <T> what a grant yields
 */
final class Acquisition<T> {
  /** One attempt's answer: a value when granted, else the time after which to re-check. */
  record Attempt<T>(@Nullable T value, long retryAfterMillis) {
    static <T> Attempt<T> granted(T value) {
      return new Attempt<>(value, -1);
    }

    static <T> Attempt<T> busy(long retryAfterMillis) {
      return new Attempt<>(null, retryAfterMillis);
    }
  }

  private static final long MIN_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private final LatchkeyClient client;
  private final ResourceType type;
  private final String name;
  private final @Nullable String owner;
  private final boolean shared;
  private final Supplier<CompletableFuture<Attempt<T>>> attempt;
  private final Consumer<T> compensate;
  private final Runnable abandon;
  private final long deadline;
  private final boolean forever;
  private final long maxSleepNanos;
  private final CompletableFuture<@Nullable T> result = new CompletableFuture<>();
  private final Ticker ticker;
  private volatile WaitChannels.@Nullable Waiter waiter;
  private int rounds;

  Acquisition(
      LatchkeyClient client,
      ResourceType type,
      String name,
      @Nullable String owner,
      boolean shared,
      long waitNanos,
      long maxSleepNanos,
      Supplier<CompletableFuture<Attempt<T>>> attempt,
      Consumer<T> compensate,
      Runnable abandon) {
    this.client = client;
    this.type = type;
    this.name = name;
    this.owner = owner;
    this.shared = shared;
    this.attempt = attempt;
    this.compensate = compensate;
    this.abandon = abandon;
    this.ticker = client.options().ticker();
    this.forever = waitNanos < 0;
    this.deadline = ticker.nanoTime() + Math.max(0, waitNanos);
    this.maxSleepNanos = maxSleepNanos;
  }

  /**
   * Starts the loop; waitNanos below zero waits forever. An attempt that is granted at once (the
   * uncontended case, on a backend that answered synchronously) returns without setting up any of
   * the waiting machinery.
   */
  // Handler futures left unread on purpose: the handlers route every outcome into result
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
      return attempt.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  // Handler futures left unread on purpose: the handlers route every outcome into result
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
              compensate.accept(outcome.value());
            }
          } else {
            onBusy(outcome.retryAfterMillis(), signal);
          }
        });
  }

  // Handler futures left unread on purpose: the handlers route every outcome into result
  // themselves; tryOnce reports its own failures into result.
  @SuppressWarnings("FutureReturnValueIgnored")
  private void onBusy(long retryAfterMillis, @Nullable CompletableFuture<Void> signal) {
    long remaining = forever ? Long.MAX_VALUE : deadline - ticker.nanoTime();
    if (remaining <= 0) {
      result.complete(null);
      return;
    }
    if (waiter == null || signal == null) {
      WaitChannels.Waiter joined = client.waitChannels().join(type, name, owner, shared);
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
    long sleep = Math.min(sleepBound(), remaining);
    if (retryAfterMillis >= 0) {
      // The holder's lease ends then; an expiry publishes nothing, so look again at that moment.
      sleep = Math.min(sleep, TimeUnit.MILLISECONDS.toNanos(retryAfterMillis + 1));
    }
    rounds++;
    signal.completeOnTimeout(null, Math.max(sleep, 0), TimeUnit.NANOSECONDS);
    signal.thenRun(this::tryOnce);
  }

  /**
   * With push wake-ups the sleep is bounded only by the re-check interval. Without, waiters poll
   * with a back-off that doubles from 5 ms up to that interval, with full jitter so that pollers do
   * not march in step.
   */
  private long sleepBound() {
    if (client.hasPushWakeups()) {
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
      abandon.run();
    }
  }
}
