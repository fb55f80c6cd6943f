package io.latchkey.internal;

import io.latchkey.BackendTimeoutException;
import io.latchkey.BackendUnavailableException;
import io.latchkey.LatchkeyException;
import io.latchkey.Ticker;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Every call into the backend goes through here: it is bounded by the operation timeout, and
 * failures of the client library become latchkey exceptions that name the backend and the
 * operation.
 *
 * <p>The policy for an answer that comes late or never. A call that times out may still have
 * happened: backends apply each operation at most once and never send it after the engine gave up,
 * but one already sent may be applied. The caller sees {@link BackendTimeoutException} at the
 * bound; the call's own stage is kept, and if it later completes with an answer, that answer goes
 * to the {@code lateAnswer} consumer of the call, which undoes exactly what the answer proves was
 * granted or taken (a lock hold by owner and fencing token, a permit by its id, semaphore permits
 * by adding them back), once. A call that failed without an answer (a connection reset) proves
 * nothing and is not undone: what it may have granted runs out with its lease. Nothing is ever
 * retried blindly.
 */
final class BackendCalls {
  private final String backend;
  private final Duration timeout;
  private final long timeoutNanos;
  private final ScheduledExecutorService timer;
  private final Ticker ticker;
  private volatile boolean closed;
  // The calls in flight, oldest first: a list linked through the calls themselves, guarded by
  // this object's monitor, with whether a sweep is scheduled.
  private final Object inFlight = new Object();
  private @Nullable InFlight<?> first;
  private @Nullable InFlight<?> last;
  private boolean sweepScheduled;

  /**
   * @param timer runs the sweeps that fail calls past their deadline
   * @param ticker the clock of those deadlines: the one {@code timer} keeps (a manual one in tests)
   */
  BackendCalls(String backend, Duration timeout, ScheduledExecutorService timer, Ticker ticker) {
    this.backend = backend;
    this.timeout = timeout;
    this.timeoutNanos = timeout.toNanos();
    this.timer = timer;
    this.ticker = ticker;
  }

  /**
   * One backend call as one object: what it is, how it is sent, and what becomes of an answer that
   * nobody waits for any more. The engine's hot paths implement it on an object they have anyway,
   * instead of a lambda for each part.
   *
   * @param <T> the answer
   */
  interface Call<T> {
    /** Describes the operation for error messages; only called when something fails. */
    String what();

    /** Sends the operation to the backend; called once. */
    CompletionStage<T> send();

    /**
     * The answer came after the call timed out or its caller gave up: undo exactly what it proves
     * was granted or taken. Nothing to undo by default.
     */
    default void lateAnswer(T answer) {}
  }

  /**
   * @param what describes the operation for error messages; only called when something fails
   */
  <T> CompletableFuture<T> call(
      Supplier<String> what, Supplier<? extends CompletionStage<T>> operation) {
    return call(what, operation, late -> {});
  }

  /**
   * @param what describes the operation for error messages; only called when something fails
   * @param lateAnswer receives the answer if it arrives after the call timed out
   */
  <T> CompletableFuture<T> call(
      Supplier<String> what,
      Supplier<? extends CompletionStage<T>> operation,
      Consumer<T> lateAnswer) {
    return call(
        new Call<T>() {
          @Override
          public String what() {
            return what.get();
          }

          @Override
          public CompletionStage<T> send() {
            return operation.get();
          }

          @Override
          public void lateAnswer(T answer) {
            lateAnswer.accept(answer);
          }
        });
  }

  /** Sends a call, bounded by the operation timeout. */
  // The handler's future is left unread on purpose: the handler relays the outcome itself.
  @SuppressWarnings("FutureReturnValueIgnored")
  <T> CompletableFuture<T> call(Call<T> call) {
    if (closed) {
      return CompletableFuture.failedFuture(
          new IllegalStateException("this latchkey client is closed"));
    }
    CompletionStage<T> stage;
    try {
      stage = call.send();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(translate(call, e));
    }
    CompletableFuture<T> source = stage.toCompletableFuture();
    if (source.isDone()) {
      // Synchronous backends (in-memory) answer at once: no deadline needed.
      return source.isCompletedExceptionally() ? relay(call, source) : source;
    }
    InFlight<T> inFlight = new InFlight<>(call, ticker.nanoTime() + timeoutNanos);
    enlist(inFlight);
    source.whenComplete(inFlight);
    return inFlight;
  }

  /**
   * A call on its way: the future its caller sees, the handler of the backend's answer, and its
   * place in the list of calls in flight, all in one object.
   */
  private final class InFlight<T> extends CompletableFuture<T>
      implements BiConsumer<T, @Nullable Throwable> {
    private final Call<T> call;
    private final long deadline;
    // Guarded by the list's monitor.
    private @Nullable InFlight<?> previous;
    private @Nullable InFlight<?> next;
    private boolean listed;

    InFlight(Call<T> call, long deadline) {
      this.call = call;
      this.deadline = deadline;
    }

    /** The backend answered (or failed). */
    @Override
    public void accept(T value, @Nullable Throwable failure) {
      delist(this);
      if (failure == null) {
        if (!complete(value)) {
          call.lateAnswer(value);
        }
      } else {
        completeExceptionally(translate(call, failure));
      }
    }

    void expire() {
      completeExceptionally(
          new BackendTimeoutException(
              backend + " did not answer '" + call.what() + "' within " + timeout));
    }
  }

  private void enlist(InFlight<?> call) {
    boolean schedule;
    synchronized (inFlight) {
      call.listed = true;
      call.previous = last;
      if (last == null) {
        first = call;
      } else {
        last.next = call;
      }
      last = call;
      schedule = !sweepScheduled;
      sweepScheduled = true;
    }
    if (schedule) {
      scheduleSweep(call.deadline);
    }
  }

  private void delist(InFlight<?> call) {
    synchronized (inFlight) {
      unlink(call);
    }
  }

  // Guarded by the list's monitor.
  private void unlink(InFlight<?> call) {
    if (!call.listed) {
      return;
    }
    call.listed = false;
    InFlight<?> before = call.previous;
    InFlight<?> after = call.next;
    if (before == null) {
      first = after;
    } else {
      before.next = after;
    }
    if (after == null) {
      last = before;
    } else {
      after.previous = before;
    }
    call.previous = null;
    call.next = null;
  }

  @SuppressWarnings("FutureReturnValueIgnored") // a sweep is never cancelled
  private void scheduleSweep(long deadline) {
    try {
      timer.schedule(this::sweep, Math.max(0, deadline - ticker.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException shutDown) {
      // The client is closing: no call in flight will get its answer bounded any more.
      List<InFlight<?>> orphans = new ArrayList<>();
      synchronized (inFlight) {
        sweepScheduled = false;
        while (first != null) {
          InFlight<?> call = first;
          unlink(call);
          orphans.add(call);
        }
      }
      orphans.forEach(
          call ->
              call.completeExceptionally(
                  new IllegalStateException("this latchkey client is closed")));
    }
  }

  /**
   * Fails every call whose deadline has passed, then waits for the next deadline. Every call has
   * the same timeout, so the list, in the order the calls started, is in the order of their
   * deadlines too: one timer task at a time serves them all (a task per call would cost an
   * insertion into and a removal from the scheduler's queue on every round trip).
   */
  private void sweep() {
    List<InFlight<?>> expired = new ArrayList<>(0);
    long next;
    boolean more;
    synchronized (inFlight) {
      long now = ticker.nanoTime();
      InFlight<?> oldest = first;
      while (oldest != null && oldest.deadline - now <= 0) {
        unlink(oldest);
        expired.add(oldest);
        oldest = first;
      }
      more = oldest != null;
      next = oldest != null ? oldest.deadline : 0;
      sweepScheduled = more;
    }
    // Completed outside the monitor: what waits on these calls runs now, on this thread.
    expired.forEach(InFlight::expire);
    if (more) {
      scheduleSweep(next);
    }
  }

  private <T> CompletableFuture<T> relay(Call<?> what, CompletableFuture<T> failed) {
    try {
      failed.join();
      throw new IllegalStateException("future was expected to have failed");
    } catch (CompletionException | CancellationException e) {
      return CompletableFuture.failedFuture(translate(what, e));
    }
  }

  private RuntimeException translate(Call<?> what, Throwable failure) {
    Throwable cause = unwrap(failure);
    if (cause instanceof LatchkeyException
        || cause instanceof IllegalArgumentException
        || cause instanceof IllegalStateException
        || cause instanceof UnsupportedOperationException) {
      return (RuntimeException) cause;
    }
    if (ranOutOfTime(cause)) {
      // The backend's own bound (a socket read timeout set to the time left) can fire a moment
      // before the engine's timer: the same event, reported the same way.
      BackendTimeoutException ranOut =
          new BackendTimeoutException(
              backend
                  + " did not answer '"
                  + what.what()
                  + "' within "
                  + timeout
                  + ": "
                  + cause.getMessage());
      ranOut.addSuppressed(cause);
      return ranOut;
    }
    return new BackendUnavailableException(
        backend + " failed '" + what.what() + "': " + cause.getMessage(), cause);
  }

  /**
   * Whether a backend's failure says that its own bound ran out: a {@link TimeoutException} or a
   * {@link SocketTimeoutException} anywhere in the chain of causes (the SPI's way of saying so).
   */
  private static boolean ranOutOfTime(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof TimeoutException || t instanceof SocketTimeoutException) {
        return true;
      }
    }
    return false;
  }

  static Throwable unwrap(Throwable failure) {
    Throwable t = failure;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** From now on every call fails at once: the client is closed. */
  void close() {
    closed = true;
  }

  String backend() {
    return backend;
  }
}
