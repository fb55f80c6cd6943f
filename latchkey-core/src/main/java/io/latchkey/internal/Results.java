package io.latchkey.internal;

import io.latchkey.LockTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/** Turns the engine's "null means the wait ran out" into the API's outcomes. */
final class Results {
  private Results() {}

  static LockTimeoutException timeout(String what, Duration wait) {
    return new LockTimeoutException("could not " + what + " within " + wait);
  }

  static <T> T orTimeout(@Nullable T value, String what, Duration wait) {
    if (value == null) {
      throw timeout(what, wait);
    }
    return value;
  }

  /**
   * The async form: a null result fails with {@link LockTimeoutException}, and cancelling the
   * returned future cancels the acquisition (whose late grant is then released).
   */
  static <T> CompletableFuture<T> orTimeoutAsync(
      CompletableFuture<@Nullable T> acquisition, String what, Duration wait) {
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
    out.whenComplete(
        (value, failure) -> {
          if (out.isCancelled()) {
            acquisition.cancel(false);
          }
        });
    return out;
  }
}
