package io.latchkey.internal;

import io.latchkey.LatchkeyException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The synchronous forms of the API wait here for the asynchronous engine. Interrupting a waiting
 * thread cancels the operation; a grant that races with the cancellation is released by the
 * acquisition itself.
 */
final class Blocking {
  private Blocking() {}

  static <T> T await(CompletableFuture<T> future) throws InterruptedException {
    try {
      return future.get();
    } catch (InterruptedException e) {
      future.cancel(false);
      throw e;
    } catch (ExecutionException e) {
      throw rethrow(e);
    }
  }

  /** Waits ignoring interrupts (as {@link java.util.concurrent.locks.Lock#lock()} does). */
  static <T> T awaitUninterruptibly(CompletableFuture<T> future) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return future.get();
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          throw rethrow(e);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** For operations that cannot be usefully interrupted (a single bounded backend call). */
  static <T> T join(CompletableFuture<T> future) {
    return awaitUninterruptibly(future);
  }

  private static RuntimeException rethrow(ExecutionException e) {
    Throwable cause = BackendCalls.unwrap(e);
    if (cause instanceof RuntimeException runtime) {
      return runtime;
    }
    if (cause instanceof Error error) {
      throw error;
    }
    return new LatchkeyException("unexpected failure: " + cause, cause);
  }
}
