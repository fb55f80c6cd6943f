package io.latchkey.internal;

import io.latchkey.BackendTimeoutException;
import io.latchkey.BackendUnavailableException;
import io.latchkey.LatchkeyException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;

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
  private final ScheduledExecutorService timer;
  private volatile boolean closed;

  BackendCalls(String backend, Duration timeout, ScheduledExecutorService timer) {
    this.backend = backend;
    this.timeout = timeout;
    this.timer = timer;
  }

  /**
   * @param what describes the operation for error messages; only called when something fails
   */
  // Handler futures left unread on purpose: the handler relays the outcome into the returned future
  // itself.
  @SuppressWarnings("FutureReturnValueIgnored")
  <T> CompletableFuture<T> call(
      Supplier<String> what, Supplier<? extends CompletionStage<T>> operation) {
    return call(what, operation, late -> {});
  }

  /**
   * @param what describes the operation for error messages; only called when something fails
   * @param lateAnswer receives the answer if it arrives after the call timed out
   */
  @SuppressWarnings("FutureReturnValueIgnored") // the handler deals with every outcome itself
  <T> CompletableFuture<T> call(
      Supplier<String> what,
      Supplier<? extends CompletionStage<T>> operation,
      Consumer<T> lateAnswer) {
    if (closed) {
      return CompletableFuture.failedFuture(
          new IllegalStateException("this latchkey client is closed"));
    }
    CompletionStage<T> stage;
    try {
      stage = operation.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(translate(what, e));
    }
    CompletableFuture<T> source = stage.toCompletableFuture();
    if (source.isDone()) {
      // Synchronous backends (in-memory) answer at once: no timer needed.
      return source.isCompletedExceptionally() ? relay(what, source) : source;
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    ScheduledFuture<?> bound =
        timer.schedule(
            () ->
                result.completeExceptionally(
                    new BackendTimeoutException(
                        backend + " did not answer '" + what.get() + "' within " + timeout)),
            timeout.toNanos(),
            TimeUnit.NANOSECONDS);
    source.whenComplete(
        (value, failure) -> {
          bound.cancel(false);
          if (failure == null) {
            if (!result.complete(value)) {
              lateAnswer.accept(value);
            }
          } else {
            result.completeExceptionally(translate(what, failure));
          }
        });
    return result;
  }

  private <T> CompletableFuture<T> relay(Supplier<String> what, CompletableFuture<T> failed) {
    try {
      failed.join();
      throw new IllegalStateException("future was expected to have failed");
    } catch (CompletionException | CancellationException e) {
      return CompletableFuture.failedFuture(translate(what, e));
    }
  }

  RuntimeException translate(Supplier<String> what, Throwable failure) {
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
                  + what.get()
                  + "' within "
                  + timeout
                  + ": "
                  + cause.getMessage());
      ranOut.addSuppressed(cause);
      return ranOut;
    }
    return new BackendUnavailableException(
        backend + " failed '" + what.get() + "': " + cause.getMessage(), cause);
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
