package io.latchkey.reactor;

import io.latchkey.Lease;
import io.latchkey.LeaseSource;
import java.time.Duration;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The Reactor form of anything that hands out {@link Lease}s (a lock, a mutex, a leased semaphore):
 * acquiring as a {@code Mono<Lease>}, and holding a lease for the duration of a {@code Mono} or
 * {@code Flux}. See {@link Reactive} for what every {@code Mono} of this module guarantees.
 */
public class ReactiveLeaseSource {
  private final LeaseSource source;

  ReactiveLeaseSource(LeaseSource source) {
    this.source = source;
  }

  /**
   * @return the name of the lock or semaphore
   */
  public String name() {
    return source.name();
  }

  /**
   * {@link LeaseSource#acquireAsync(Duration)} as a {@code Mono}: acquires when subscribed; the
   * watchdog keeps the lease until it is released. Cancelling gives back a lease that was granted
   * meanwhile.
   *
   * @param wait how long to wait
   * @return the lease, or fails with {@link io.latchkey.LockTimeoutException}
   */
  public Mono<Lease> acquire(Duration wait) {
    return Reactive.grant(() -> source.acquireAsync(wait), Lease.class, Reactive::releaseQuietly);
  }

  /**
   * {@link LeaseSource#acquireAsync(Duration, Duration)} as a {@code Mono}.
   *
   * @param wait how long to wait
   * @param leaseTime how long the grant is held at most
   * @return the lease, or fails with {@link io.latchkey.LockTimeoutException}
   */
  public Mono<Lease> acquire(Duration wait, Duration leaseTime) {
    return Reactive.grant(
        () -> source.acquireAsync(wait, leaseTime), Lease.class, Reactive::releaseQuietly);
  }

  /**
   * Holds a lease while {@code work} runs: acquires when subscribed, subscribes to the work, and
   * releases when it completes, fails or is cancelled. A lease lost meanwhile fails the result with
   * {@link io.latchkey.LeaseLostException} (from the release), even if the work succeeded.
   *
   * @param wait how long to wait for the lease
   * @param work what to do while holding it; gets the lease (for its fencing token)
   * @param <T> the work's value
   * @return the work's value
   */
  public <T> Mono<T> withLease(Duration wait, Function<? super Lease, ? extends Mono<T>> work) {
    return withLeaseMany(wait, work).singleOrEmpty();
  }

  /**
   * Like {@link #withLease(Duration, Function)}, for work that emits many values.
   *
   * @param wait how long to wait for the lease
   * @param work what to do while holding it
   * @param <T> the work's values
   * @return the work's values
   */
  public <T> Flux<T> withLeaseMany(
      Duration wait, Function<? super Lease, ? extends Publisher<T>> work) {
    return Flux.usingWhen(
        acquire(wait),
        work,
        Reactive::release,
        (lease, failure) -> Reactive.release(lease),
        Reactive::release);
  }

  @Override
  public String toString() {
    return "Reactive[" + source + "]";
  }
}
