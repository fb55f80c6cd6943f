package io.latchkey.reactor;

import io.latchkey.DistributedCountDownLatch;
import java.time.Duration;
import reactor.core.publisher.Mono;

/** The Reactor form of a {@link DistributedCountDownLatch}. */
public final class ReactiveCountDownLatch {
  private final DistributedCountDownLatch latch;

  ReactiveCountDownLatch(DistributedCountDownLatch latch) {
    this.latch = latch;
  }

  /**
   * {@link DistributedCountDownLatch#countDownAsync()} as a {@code Mono}.
   *
   * @return the count after counting down
   */
  public Mono<Long> countDown() {
    return Reactive.fromStage(latch::countDownAsync, nothing -> {});
  }

  /**
   * {@link DistributedCountDownLatch#awaitAsync()} as a {@code Mono}: waits as long as it takes.
   *
   * @return completes when the count reaches zero (or the latch is deleted)
   */
  public Mono<Void> await() {
    return Reactive.fromStage(latch::awaitAsync, nothing -> {});
  }

  /**
   * {@link DistributedCountDownLatch#awaitAsync(Duration)} as a {@code Mono}.
   *
   * @param wait how long to wait at most
   * @return true if the count reached zero in time, false if the wait ran out
   */
  public Mono<Boolean> await(Duration wait) {
    return Reactive.fromStage(() -> latch.awaitAsync(wait), nothing -> {});
  }

  @Override
  public String toString() {
    return "Reactive[" + latch + "]";
  }
}
