package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Awaiting.eventually;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A blocking call running on a pool thread, so that a test can see it wait, interrupt it and
 * collect its outcome. Use a pool of its own per call when the call's thread identity matters (a
 * thread owns the locks it takes).
 *
 * @param <T> the call's result
 */
final class BackgroundCall<T> {
  private volatile @Nullable Thread thread;
  private final Future<T> future;

  private BackgroundCall(ExecutorService pool, Callable<T> call) {
    this.future =
        pool.submit(
            () -> {
              thread = Thread.currentThread();
              return call.call();
            });
  }

  /**
   * @param pool where to run
   * @param call the blocking call
   * @return the running call
   * @param <T> its result
   */
  static <T> BackgroundCall<T> start(ExecutorService pool, Callable<T> call) {
    return new BackgroundCall<>(pool, call);
  }

  /**
   * Runs a call on another thread and waits for it.
   *
   * @param pool where to run
   * @param call the call
   * @return its result
   * @param <T> its result
   * @throws Exception what the call threw
   */
  static <T> T run(ExecutorService pool, Callable<T> call) throws Exception {
    return start(pool, call).get();
  }

  /** Waits until the call's thread is parked, i.e. the call has started to wait. */
  BackgroundCall<T> awaitParked() {
    eventually()
        .until(
            () -> {
              Thread running = thread;
              return future.isDone()
                  || (running != null
                      && (running.getState() == Thread.State.WAITING
                          || running.getState() == Thread.State.TIMED_WAITING));
            });
    return this;
  }

  /** Interrupts the call's thread once it has started. */
  void interrupt() {
    eventually().until(() -> thread != null);
    Thread running = thread;
    if (running != null) {
      running.interrupt();
    }
  }

  /**
   * @return true once the call returned or threw
   */
  boolean isDone() {
    return future.isDone();
  }

  /**
   * @return the call's result, waiting at most {@link Awaiting#PATIENCE}
   * @throws Exception what the call threw, or a timeout if it did not finish
   */
  T get() throws Exception {
    return get(Awaiting.PATIENCE);
  }

  /**
   * @param bound how long to wait for the result
   * @return the call's result
   * @throws Exception what the call threw, or a timeout if it did not finish in time
   */
  T get(Duration bound) throws Exception {
    try {
      return future.get(bound.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof Exception exception) {
        throw exception;
      }
      if (cause instanceof Error error) {
        throw error;
      }
      throw e;
    }
  }
}
