package io.latchkey.internal;

import io.latchkey.LockTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/** Turns the engine's "null means the wait ran out" into the API's outcomes. */
final class Results {
  private Results() {}

  static LockTimeoutException timeout(Supplier<String> what, Duration wait) {
    return new LockTimeoutException("could not " + what.get() + " within " + wait);
  }

  static <T> T orTimeout(@Nullable T value, Supplier<String> what, Duration wait) {
    if (value == null) {
      throw timeout(what, wait);
    }
    return value;
  }

  /**
   * The async form: a null result fails with {@link LockTimeoutException}, and cancelling the
   * returned future cancels the acquisition (whose late grant is then released).
   */
  // Handler futures left unread on purpose: the handler relays the outcome into out itself.
  @SuppressWarnings("FutureReturnValueIgnored")
  static <T> CompletableFuture<T> orTimeoutAsync(
      CompletableFuture<@Nullable T> acquisition, Supplier<String> what, Duration wait) {
    CompletableFuture<T> out = new CompletableFuture<>();
    acquisition.whenComplete(
        (value, failure) -> {
          if (failure != null) {
            out.completeExceptionally(BackendCalls.unwrap(failure));
          } else if (value == null) {
            out.completeExceptionally(timeout(what, wait));
          } else {
            out.complete(value);
          }
        });
    return cancellingUpstream(out, acquisition);
  }

  /**
   * {@code source.thenApply(mapping)}, except that cancelling the result cancels {@code source} too
   * (a plain {@code thenApply} stage does not pass a cancellation upstream).
   */
  static <S, T> CompletableFuture<T> map(CompletableFuture<S> source, Function<S, T> mapping) {
    return cancellingUpstream(source.thenApply(mapping), source);
  }

  // Handler futures left unread on purpose: the handler only propagates a cancellation upstream.
  @SuppressWarnings("FutureReturnValueIgnored")
  private static <T> CompletableFuture<T> cancellingUpstream(
      CompletableFuture<T> out, CompletableFuture<?> upstream) {
    out.whenComplete(
        (value, failure) -> {
          if (out.isCancelled()) {
            upstream.cancel(false);
          }
        });
    return out;
  }
}
