package io.latchkey.reactor;

import io.latchkey.Lease;
import io.latchkey.LeasedSemaphore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;

/**
 * The Reactor form of a {@link LeasedSemaphore}: its permits are leases ({@link #acquire}, {@link
 * #withLease}), and a permit can also be returned by its id.
 */
public final class ReactiveLeasedSemaphore extends ReactiveLeaseSource {
  private final LeasedSemaphore semaphore;

  ReactiveLeasedSemaphore(LeasedSemaphore semaphore) {
    super(semaphore);
    this.semaphore = semaphore;
  }

  /**
   * {@link LeasedSemaphore#releaseAsync(String)} as a {@code Mono}.
   *
   * @param permitId the {@link io.latchkey.Lease#holderId()} of the permit
   * @return true if the permit was held
   */
  public Mono<Boolean> release(String permitId) {
    return Reactive.fromStage(() -> semaphore.releaseAsync(permitId), nothing -> {});
  }

  /**
   * {@link LeasedSemaphore#acquireAsync()} as a {@code Mono}: waits as long as it takes. Cancelling
   * cancels the wait; a permit granted meanwhile is given back.
   *
   * @return the permit
   */
  public Mono<Lease> acquire() {
    return Reactive.grant(semaphore::acquireAsync, Lease.class, Reactive::releaseQuietly);
  }

  /**
   * {@link LeasedSemaphore#acquireAsync(int)} as a {@code Mono}: all the permits or none, waiting
   * as long as it takes. Cancelling cancels the wait; permits granted meanwhile are given back.
   *
   * @param permits how many
   * @return the permits, each its own lease
   */
  public Mono<List<Lease>> acquire(int permits) {
    return permits(() -> semaphore.acquireAsync(permits));
  }

  /**
   * {@link LeasedSemaphore#acquireAsync(int, Duration)} as a {@code Mono}.
   *
   * @param permits how many
   * @param wait how long to wait for all of them
   * @return the permits, or fails with {@link io.latchkey.LockTimeoutException}
   */
  public Mono<List<Lease>> acquire(int permits, Duration wait) {
    return permits(() -> semaphore.acquireAsync(permits, wait));
  }

  /**
   * {@link LeasedSemaphore#acquireAsync(int, Duration, Duration)} as a {@code Mono}.
   *
   * @param permits how many
   * @param wait how long to wait for all of them
   * @param leaseTime each permit's lease
   * @return the permits, or fails with {@link io.latchkey.LockTimeoutException}
   */
  public Mono<List<Lease>> acquire(int permits, Duration wait, Duration leaseTime) {
    return permits(() -> semaphore.acquireAsync(permits, wait, leaseTime));
  }

  /**
   * {@link LeasedSemaphore#releaseAsync(List)} as a {@code Mono}: all of them or none.
   *
   * @param permitIds the {@link io.latchkey.Lease#holderId()}s of the permits
   * @return true if every permit was held and is now released
   */
  public Mono<Boolean> release(List<String> permitIds) {
    return Reactive.fromStage(() -> semaphore.releaseAsync(permitIds), nothing -> {});
  }

  /**
   * {@link LeasedSemaphore#updateLeaseTimeAsync(String, Duration)} as a {@code Mono}.
   *
   * @param permitId the {@link io.latchkey.Lease#holderId()} of the permit
   * @param leaseTime its new lease, counted from now
   * @return true if the permit was held and now has that lease
   */
  public Mono<Boolean> updateLeaseTime(String permitId, Duration leaseTime) {
    return Reactive.fromStage(
        () -> semaphore.updateLeaseTimeAsync(permitId, leaseTime), nothing -> {});
  }

  /** A batch of permits, given back whole if nobody will use it. */
  private static Mono<List<Lease>> permits(
      Supplier<? extends CompletionStage<List<Lease>>> acquire) {
    return Reactive.fromStage(acquire, ReactiveLeasedSemaphore::giveBack)
        .doOnDiscard(List.class, ReactiveLeasedSemaphore::giveBack);
  }

  private static void giveBack(List<?> leases) {
    for (Object lease : leases) {
      if (lease instanceof Lease held) {
        Reactive.releaseQuietly(held);
      }
    }
  }
}
