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
