package io.latchkey.internal;

import io.latchkey.LatchkeyObserver.AcquireObservation;
import io.latchkey.Primitive;
import io.latchkey.Ticker;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.WaitingAttempts;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.BiConsumer;
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
 * queue) and the waiter leaves its channel. A wait that ran out (the backend answering "busy" to
 * the end) is answered only once the abandon step was answered too: on a backend whose calls may
 * overtake each other (a pool of database connections), the caller's next call could otherwise find
 * its own abandoned queue entry ahead of it.
 *
 * @param <T> what a grant yields
 */
final class Acquisition<T> extends CompletableFuture<@Nullable T>
    implements BiConsumer<Acquisition.@Nullable Attempt<T>, @Nullable Throwable> {
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
   * What is waited for: the resource (and, for observers, the primitive asking for it), the
   * waiter's owner (for wake-ups aimed at one owner) and mode, how long to wait (below zero: for
   * ever) and the longest sleep between checks.
   */
  record WaitPlan(
      Primitive primitive,
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
      Primitive primitive =
          switch (type) {
            case SEMAPHORE -> Primitive.SEMAPHORE;
            case LEASED_SEMAPHORE -> Primitive.LEASED_SEMAPHORE;
            case COUNT_DOWN_LATCH -> Primitive.COUNT_DOWN_LATCH;
            case LOCK -> throw new IllegalArgumentException("a lock's waiters have owners");
          };
      return new WaitPlan(
          primitive, type, name, null, shared, waitNanos, options.recheckInterval().toNanos());
    }
  }

  /** How one primitive tries, undoes a grant nobody took, and gives up. */
  interface Strategy<T> {
    /** One attempt on the backend. */
    CompletableFuture<Attempt<T>> attempt();

    /** A grant that arrived after the caller gave up: undo it. */
    void compensate(T granted);

    /**
     * Nothing was granted and the wait is over (e.g. leave the wait queue).
     *
     * @return completes when the backend answered (its outcome is not looked at: the step is best
     *     effort)
     */
    default CompletionStage<?> abandon() {
      return CompletableFuture.completedFuture(null);
    }

    /**
     * The attempt a releasing holder of this client may make for this waiter in its release (see
     * {@link LockStore#releaseAndHandOver}), or null if this acquisition takes no hand-over.
     */
    default @Nullable LockRequest handOverRequest() {
      return null;
    }

    /**
     * Whether this acquisition may wait behind a holder of its own client without asking the
     * backend ({@link WaitChannels#joinBehindLocalHolder}): only a waiter that a release can hand
     * the lock over to, and whose backend serves it no differently for having queued later.
     */
    default boolean waitsBehindLocalHolder() {
      return false;
    }

    /**
     * Reads the grant that a release handed over to this waiter, as {@link #attempt} reads its own
     * answers; only called when {@link #handOverRequest} gave a request.
     *
     * @param granted the backend's answer to the handed-over attempt, granted
     * @param sentAt when the release that carried it was sent, by the ticker
     */
    default Attempt<T> handedOver(AcquireResult granted, long sentAt) {
      throw new IllegalStateException("this acquisition takes no hand-over");
    }

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

  // The phases of the loop, for hand-overs (see #claimForHandOver): an attempt is on its way or
  // being read; the loop sleeps until something wakes it; a release of this client carries an
  // attempt for it; and the same while something woke it meanwhile (it tries once the release is
  // answered, if that did not grant).
  private static final int ATTEMPTING = 0;
  private static final int SLEEPING = 1;
  private static final int CLAIMED = 2;
  private static final int CLAIMED_WOKEN = 3;

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<Acquisition> PHASE =
      AtomicIntegerFieldUpdater.newUpdater(Acquisition.class, "phase");

  private final LatchkeyClient client;
  private final WaitPlan plan;
  private final Strategy<T> strategy;
  private final long deadline;
  private final boolean forever;
  private final long maxSleepNanos;
  private final CompletableFuture<@Nullable T> result = new CompletableFuture<>();
  private final Ticker ticker;
  private volatile WaitChannels.@Nullable Waiter waiter;
  // The wait channel as it was before the first attempt (see WaitChannels#peek).
  private WaitChannels.@Nullable Sighting seen;
  private int rounds;
  private volatile boolean triedAgainAtOnce;
  // The wake-up signal armed for the attempt on its way (the attempts never overlap).
  private volatile @Nullable CompletableFuture<Void> attemptSignal;
  private AcquireObservation observation = AcquireObservation.NONE;
  private volatile boolean waitObserved;
  private volatile int phase = ATTEMPTING;
  // The wake signal of the current sleep, completed when a hand-over ends it (cancels its timer).
  private volatile @Nullable CompletableFuture<Void> sleepingOn;

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
    observation = client.observing().acquireStarted(plan.primitive(), plan.name());
    String owner = plan.owner();
    if (owner != null && plan.waitNanos() != 0 && strategy.waitsBehindLocalHolder()) {
      WaitChannels.Waiter behind =
          client.waitChannels().joinBehindLocalHolder(plan.name(), owner, this);
      if (behind != null) {
        waitBehindLocalHolder(behind);
        return this;
      }
    }
    seen = client.waitChannels().peek(plan.type(), plan.name());
    CompletableFuture<Attempt<T>> first = attemptOnce();
    if (first.isDone() && !first.isCompletedExceptionally()) {
      T granted = first.join().value();
      if (granted != null) {
        observation.granted();
        complete(granted);
        return this;
      }
    }
    handle(first, null);
    return this;
  }

  /**
   * The caller's side: this future, which the loop answers once its own result is settled.
   * Cancelling it (an interrupted caller) ends the loop.
   */
  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    boolean cancelled = super.cancel(mayInterruptIfRunning);
    if (cancelled && result.cancel(false)) {
      settled(null, new CancellationException("the caller gave up"));
    }
    return cancelled;
  }

  private void grant(T value) {
    if (result.complete(value)) {
      settled(value, null);
    } else {
      strategy.compensate(value);
    }
  }

  private void fail(Throwable failure) {
    if (result.completeExceptionally(failure)) {
      settled(null, failure);
    }
  }

  private void runOut() {
    if (result.complete(null)) {
      settled(null, null);
    }
  }

  /**
   * The loop's result is settled (by whichever of grant, failure, running out or cancellation came
   * first): leave the channel, give up the queue place if nothing was granted, and answer the
   * caller.
   */
  // Handler futures left unread on purpose: the handler answers the caller itself.
  @SuppressWarnings("FutureReturnValueIgnored")
  private void settled(@Nullable T value, @Nullable Throwable failure) {
    CompletionStage<?> finished = finish(value != null && failure == null);
    observeEnd(value, failure);
    if (failure != null) {
      // The backend failed or the caller gave up: the failure is answered at once, within its
      // bound, whatever becomes of the abandon step.
      completeExceptionally(failure);
    } else if (value != null) {
      if (!complete(value)) {
        // The caller cancelled while the grant was being handed over.
        strategy.compensate(value);
      }
    } else {
      finished.whenComplete((ignored, bestEffort) -> complete(null));
    }
  }

  private void tryOnce() {
    if (result.isDone()) {
      return;
    }
    while (true) {
      int now = phase;
      if (now == CLAIMED) {
        if (PHASE.compareAndSet(this, CLAIMED, CLAIMED_WOKEN)) {
          return; // a release of this client is trying for it; tried once that is answered
        }
      } else if (now != SLEEPING) {
        return; // already woken and trying, or will try once the hand-over is answered
      } else if (PHASE.compareAndSet(this, SLEEPING, ATTEMPTING)) {
        break;
      }
    }
    WaitChannels.Waiter joined = waiter;
    CompletableFuture<Void> signal = joined == null ? null : client.waitChannels().arm(joined);
    handle(attemptOnce(), signal);
  }

  /**
   * One attempt; one of a wait (a wait time other than zero) is marked so for the backend ({@link
   * WaitingAttempts}).
   */
  private CompletableFuture<Attempt<T>> attemptOnce() {
    try {
      return WaitingAttempts.start(plan.waitNanos() != 0, strategy::attempt);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  // The handler's future is left unread on purpose: the handler routes every outcome itself.
  @SuppressWarnings("FutureReturnValueIgnored")
  private void handle(
      CompletableFuture<Attempt<T>> answer, @Nullable CompletableFuture<Void> signal) {
    attemptSignal = signal;
    answer.whenComplete(this);
  }

  /** The attempt on its way was answered (this object is its handler, not a lambda per attempt). */
  @Override
  public void accept(@Nullable Attempt<T> outcome, @Nullable Throwable failure) {
    CompletableFuture<Void> signal = attemptSignal;
    if (failure != null || outcome == null) {
      fail(
          failure != null
              ? BackendCalls.unwrap(failure)
              : new IllegalStateException("an attempt answered nothing"));
    } else if (outcome.value() != null) {
      grant(outcome.value());
    } else if (outcome.retryAtOnce() && !triedAgainAtOnce) {
      triedAgainAtOnce = true;
      handle(attemptOnce(), signal);
    } else {
      onBusy(outcome, signal);
    }
  }

  // Handler futures left unread on purpose: the handlers route every outcome into the result
  // themselves.
  @SuppressWarnings("FutureReturnValueIgnored")
  private void onBusy(Attempt<T> outcome, @Nullable CompletableFuture<Void> signal) {
    if (!waitObserved && plan.waitNanos() != 0) {
      waitObserved = true;
      observation.waiting();
    }
    long remaining = forever ? Long.MAX_VALUE : deadline - ticker.nanoTime();
    if (remaining <= 0) {
      runOut();
      return;
    }
    CompletableFuture<Void> wakeSignal = signal;
    if (waiter == null || wakeSignal == null) {
      WaitChannels.Waiter joined =
          client
              .waitChannels()
              .join(plan.type(), plan.name(), plan.owner(), plan.shared(), seen, this);
      waiter = joined;
      if (result.isDone()) {
        client.waitChannels().leave(joined, false);
        return;
      }
      wakeSignal = client.waitChannels().caughtUpSignal(joined);
    }
    if (wakeSignal == null) {
      WaitChannels.Waiter joined = Objects.requireNonNull(waiter);
      phase = SLEEPING;
      joined
          .ready()
          .whenComplete(
              (ok, failure) -> {
                if (failure != null) {
                  fail(BackendCalls.unwrap(failure));
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
    CompletableFuture<Void> wake = wakeSignal;
    if (watch != null) {
      watch.whenComplete((fired, failure) -> wake.complete(null));
    }
    sleep(wake, sleep);
  }

  /**
   * Waits behind a holder of this client without an attempt: the holder's release hands the lock
   * over ({@link #claimForHandOver}), or the end of its hold wakes this waiter to try; the re-check
   * bound still applies, in case neither comes (the waiter then tries, and waits as any other).
   */
  private void waitBehindLocalHolder(WaitChannels.Waiter behind) {
    waiter = behind;
    waitObserved = true;
    observation.waiting();
    long remaining = forever ? Long.MAX_VALUE : deadline - ticker.nanoTime();
    CompletableFuture<Void> wake =
        Objects.requireNonNull(client.waitChannels().caughtUpSignal(behind));
    sleep(wake, Math.min(maxSleepNanos, remaining));
  }

  /** Sleeps until the wake signal completes or the timer ends the sleep, then tries once. */
  // Handler futures left unread on purpose: the handlers route every outcome into the result
  // themselves.
  @SuppressWarnings("FutureReturnValueIgnored")
  private void sleep(CompletableFuture<Void> wake, long sleep) {
    try {
      ScheduledFuture<?> timer =
          client
              .scheduler()
              .schedule(() -> wake.complete(null), Math.max(sleep, 0), TimeUnit.NANOSECONDS);
      wake.whenComplete((ok, failure) -> timer.cancel(false));
    } catch (RejectedExecutionException closed) {
      fail(new IllegalStateException("this latchkey client is closed"));
      return;
    }
    sleepingOn = wake;
    phase = SLEEPING;
    wake.thenRun(this::tryOnce);
  }

  /**
   * Claims this waiter for a hand-over: a release by another owner of this client on the same lock
   * is about to carry an attempt for it. Only a sleeping waiter can be claimed; until {@link
   * #handedOver} answers, it makes no attempt of its own (a wake-up meanwhile is kept for then).
   *
   * @return the attempt to carry, or null if this waiter cannot be claimed now
   */
  @Nullable LockRequest claimForHandOver() {
    LockRequest request = strategy.handOverRequest();
    if (request == null || result.isDone() || !PHASE.compareAndSet(this, SLEEPING, CLAIMED)) {
      return null;
    }
    return request;
  }

  /**
   * The release that claimed this waiter was answered.
   *
   * @param answer the answer to the attempt it carried (a grant, or a refusal that queued it), or
   *     null if none was made (or the release failed)
   * @param sentAt when the release was sent, by the ticker
   */
  void handedOver(@Nullable AcquireResult answer, long sentAt) {
    if (answer == null) {
      if (PHASE.getAndSet(this, SLEEPING) == CLAIMED_WOKEN) {
        tryOnce();
      }
      return;
    }
    Attempt<T> outcome;
    try {
      outcome = strategy.handedOver(answer, sentAt);
    } catch (RuntimeException e) {
      phase = ATTEMPTING;
      fail(e);
      return;
    }
    T value = outcome.value();
    if (value != null) {
      phase = ATTEMPTING;
      grant(value);
      CompletableFuture<Void> sleep = sleepingOn;
      if (sleep != null) {
        sleep.complete(null); // ends the sleep's timer; the loop is over
      }
      return;
    }
    if (outcome.retryAtOnce() || PHASE.getAndSet(this, ATTEMPTING) == CLAIMED_WOKEN) {
      // The grant was given back (it came too late to use), or something woke the waiter while
      // the release was on its way: try again at once.
      phase = SLEEPING;
      tryOnce();
      return;
    }
    // Refused: the attempt was made for this waiter (a waiter behind its own client's holder now
    // has a place on the backend), so it waits as after a refused attempt of its own, on what that
    // refusal says to wait for.
    WaitChannels.Waiter joined = waiter;
    onBusy(outcome, joined == null ? null : client.waitChannels().arm(joined));
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

  private void observeEnd(@Nullable T value, @Nullable Throwable failure) {
    if (failure != null) {
      observation.failed(BackendCalls.unwrap(failure));
    } else if (value != null) {
      observation.granted();
    } else {
      observation.timedOut();
    }
  }

  private CompletionStage<?> finish(boolean granted) {
    WaitChannels.Waiter joined = waiter;
    if (joined != null) {
      client.waitChannels().leave(joined, granted);
    }
    if (granted) {
      return CompletableFuture.completedFuture(null);
    }
    try {
      return strategy.abandon();
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(null);
    }
  }
}
