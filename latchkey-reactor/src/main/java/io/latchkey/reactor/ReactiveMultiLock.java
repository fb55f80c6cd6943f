package io.latchkey.reactor;

import io.latchkey.MultiLease;
import io.latchkey.MultiLock;
import java.time.Duration;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The Reactor form of a {@link MultiLock}: all of its locks or none. */
public final class ReactiveMultiLock {
  private final MultiLock multiLock;

  ReactiveMultiLock(MultiLock multiLock) {
    this.multiLock = multiLock;
  }

  /**
   * {@link MultiLock#acquireAsync(Duration)} as a {@code Mono}. Cancelling gives back what was
   * granted meanwhile.
   *
   * @param wait how long to wait for all of them
   * @return the multi-lease, or fails with {@link io.latchkey.LockTimeoutException}
   */
  public Mono<MultiLease> acquire(Duration wait) {
    return Reactive.grant(
        () -> multiLock.acquireAsync(wait), MultiLease.class, Reactive::releaseQuietly);
  }

  /**
   * {@link MultiLock#acquireAsync(Duration, Duration)} as a {@code Mono}.
   *
   * @param wait how long to wait for all of them
   * @param leaseTime how long they are held at most, or null for the watchdog
   * @return the multi-lease, or fails with {@link io.latchkey.LockTimeoutException}
   */
  public Mono<MultiLease> acquire(Duration wait, @Nullable Duration leaseTime) {
    return Reactive.grant(
        () -> multiLock.acquireAsync(wait, leaseTime), MultiLease.class, Reactive::releaseQuietly);
  }

  /**
   * Holds all the locks while {@code work} runs, releasing them when it completes, fails or is
   * cancelled.
   *
   * @param wait how long to wait for all of them
   * @param work what to do while holding them
   * @param <T> the work's values
   * @return the work's values
   */
  public <T> Flux<T> withLeases(
      Duration wait, Function<? super MultiLease, ? extends Publisher<T>> work) {
    return Flux.usingWhen(
        acquire(wait),
        work,
        Reactive::release,
        (lease, failure) -> Reactive.release(lease),
        Reactive::release);
  }

  @Override
  public String toString() {
    return "Reactive[" + multiLock + "]";
  }
}
