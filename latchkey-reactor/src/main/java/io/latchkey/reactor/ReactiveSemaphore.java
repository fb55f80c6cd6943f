package io.latchkey.reactor;

import io.latchkey.DistributedSemaphore;
import java.time.Duration;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The Reactor form of a {@link DistributedSemaphore}. Its permits have no owner and no lease: a
 * permit taken here stays taken until released, so prefer {@link #withPermits}, which releases them
 * whatever happens to the work.
 */
public final class ReactiveSemaphore {
  private final DistributedSemaphore semaphore;

  ReactiveSemaphore(DistributedSemaphore semaphore) {
    this.semaphore = semaphore;
  }

  /**
   * {@link DistributedSemaphore#acquireAsync(int, Duration)} as a {@code Mono}. Cancelling cancels
   * the wait (permits taken meanwhile are given back).
   *
   * @param permits how many
   * @param wait how long to wait
   * @return completes when taken, or fails with {@link io.latchkey.LockTimeoutException}
   */
  public Mono<Void> acquire(int permits, Duration wait) {
    return Reactive.fromStage(() -> semaphore.acquireAsync(permits, wait), nothing -> {});
  }

  /**
   * {@link DistributedSemaphore#acquireAsync(int)} as a {@code Mono}: waits as long as it takes.
   * Cancelling cancels the wait (permits taken meanwhile are given back).
   *
   * @param permits how many
   * @return completes when taken
   */
  public Mono<Void> acquire(int permits) {
    return Reactive.fromStage(() -> semaphore.acquireAsync(permits), nothing -> {});
  }

  /**
   * {@link DistributedSemaphore#releaseIfExistsAsync(int)} as a {@code Mono}.
   *
   * @param permits how many
   * @return true if the semaphore existed and the permits were returned
   */
  public Mono<Boolean> releaseIfExists(int permits) {
    return Reactive.fromStage(() -> semaphore.releaseIfExistsAsync(permits), nothing -> {});
  }

  /**
   * {@link DistributedSemaphore#releaseAsync(int)} as a {@code Mono}.
   *
   * @param permits how many
   * @return completes when released
   */
  public Mono<Void> release(int permits) {
    return Reactive.fromStage(() -> semaphore.releaseAsync(permits), nothing -> {});
  }

  /**
   * Holds permits while {@code work} runs: takes them when subscribed, subscribes to the work, and
   * releases them when it completes, fails or is cancelled.
   *
   * @param permits how many
   * @param wait how long to wait for them
   * @param work what to do while holding them
   * @param <T> the work's value
   * @return the work's value
   */
  public <T> Mono<T> withPermits(int permits, Duration wait, Supplier<? extends Mono<T>> work) {
    return withPermitsMany(permits, wait, work).singleOrEmpty();
  }

  /**
   * Like {@link #withPermits}, for work that emits many values: the permits are released when the
   * work completes, fails or is cancelled.
   *
   * @param permits how many
   * @param wait how long to wait for them
   * @param work what to do while holding them
   * @param <T> the work's values
   * @return the work's values
   */
  public <T> Flux<T> withPermitsMany(
      int permits, Duration wait, Supplier<? extends Publisher<T>> work) {
    return Flux.usingWhen(
        taken(permits, wait),
        held -> work.get(),
        held -> release(permits),
        (held, failure) -> release(permits),
        held -> release(permits));
  }

  /** The permits as a resource for usingWhen, which needs a value. */
  private Mono<Integer> taken(int permits, Duration wait) {
    return acquire(permits, wait).thenReturn(permits);
  }

  @Override
  public String toString() {
    return "Reactive[" + semaphore + "]";
  }
}
