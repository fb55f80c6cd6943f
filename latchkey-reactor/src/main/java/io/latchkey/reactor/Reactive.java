package io.latchkey.reactor;

import io.latchkey.DistributedCountDownLatch;
import io.latchkey.DistributedLock;
import io.latchkey.DistributedMutex;
import io.latchkey.DistributedSemaphore;
import io.latchkey.Lease;
import io.latchkey.LeasedSemaphore;
import io.latchkey.MultiLease;
import io.latchkey.MultiLock;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;

/**
 * The entry point: Reactor forms of latchkey's primitives, and of releasing a lease.
 *
 * <pre>{@code
 * ReactiveLock lock = Reactive.of(latchkey.lock("orders/42"));
 * Mono<Receipt> receipt = lock.withLease(Duration.ofSeconds(3), lease -> store.write(order, lease.fencingToken()));
 * }</pre>
 *
 * <p>Every {@code Mono} of this module is cold: the operation starts when it is subscribed, once
 * per subscription. It completes on the client's {@linkplain
 * io.latchkey.LatchkeyOptions#callbackExecutor() callback executor} (or on the subscribing thread
 * if the answer is at hand), never on latchkey's scheduler or a client library's network thread, so
 * operators downstream may block. Cancelling a subscription cancels the operation; a grant that
 * races with the cancellation is given back, never leaked. Failures are latchkey's exceptions, as
 * the asynchronous API reports them ({@link io.latchkey.LockTimeoutException}, {@link
 * io.latchkey.BackendUnavailableException}, {@link io.latchkey.LeaseLostException}...).
 */
public final class Reactive {
  private Reactive() {}

  /**
   * @param lock a lock (also a fair lock, or either side of a read-write lock)
   * @return its Reactor form
   */
  public static ReactiveLock of(DistributedLock lock) {
    return new ReactiveLock(Objects.requireNonNull(lock, "lock must not be null"));
  }

  /**
   * @param mutex a mutex
   * @return its Reactor form
   */
  public static ReactiveLeaseSource of(DistributedMutex mutex) {
    return new ReactiveLeaseSource(Objects.requireNonNull(mutex, "mutex must not be null"));
  }

  /**
   * @param semaphore a leased semaphore
   * @return its Reactor form
   */
  public static ReactiveLeasedSemaphore of(LeasedSemaphore semaphore) {
    return new ReactiveLeasedSemaphore(
        Objects.requireNonNull(semaphore, "semaphore must not be null"));
  }

  /**
   * @param semaphore a counting semaphore
   * @return its Reactor form
   */
  public static ReactiveSemaphore of(DistributedSemaphore semaphore) {
    return new ReactiveSemaphore(Objects.requireNonNull(semaphore, "semaphore must not be null"));
  }

  /**
   * @param latch a count-down latch
   * @return its Reactor form
   */
  public static ReactiveCountDownLatch of(DistributedCountDownLatch latch) {
    return new ReactiveCountDownLatch(Objects.requireNonNull(latch, "latch must not be null"));
  }

  /**
   * @param multiLock a multi-lock
   * @return its Reactor form
   */
  public static ReactiveMultiLock of(MultiLock multiLock) {
    return new ReactiveMultiLock(Objects.requireNonNull(multiLock, "multiLock must not be null"));
  }

  /**
   * {@link Lease#releaseAsync()} as a {@code Mono}.
   *
   * @param lease the lease to release
   * @return completes when released, or fails as {@link Lease#release()} would throw
   */
  public static Mono<Void> release(Lease lease) {
    Objects.requireNonNull(lease, "lease must not be null");
    return fromStage(lease::releaseAsync, nothing -> {});
  }

  /**
   * {@link MultiLease#releaseAsync()} as a {@code Mono}.
   *
   * @param lease the multi-lease to release
   * @return completes when every member is released
   */
  public static Mono<Void> release(MultiLease lease) {
    Objects.requireNonNull(lease, "lease must not be null");
    return fromStage(lease::releaseAsync, nothing -> {});
  }

  /**
   * A cold {@code Mono} of an asynchronous operation: started at subscription, cancelled with the
   * subscription. A value that arrives after the cancellation goes to {@code undo} (a grant nobody
   * will use), whether the cancellation was seen before the value or the sink discards it.
   */
  @SuppressWarnings("FutureReturnValueIgnored") // the handler delivers every outcome to the sink
  static <T> Mono<T> fromStage(
      Supplier<? extends CompletionStage<T>> operation, Consumer<? super T> undo) {
    return Mono.<T>create(
        sink -> {
          CompletableFuture<T> future = operation.get().toCompletableFuture();
          AtomicBoolean cancelled = new AtomicBoolean();
          sink.onCancel(
              () -> {
                cancelled.set(true);
                future.cancel(false);
              });
          future.whenComplete(
              (value, failure) -> {
                if (cancelled.get()) {
                  if (value != null) {
                    undo.accept(value);
                  }
                } else if (failure != null) {
                  sink.error(unwrap(failure));
                } else if (value == null) {
                  sink.success();
                } else {
                  sink.success(value);
                }
              });
        });
  }

  /**
   * A cold {@code Mono} of a grant (a lease, a multi-lease): like {@link #fromStage}, and a grant
   * that the subscriber's sink discards because the subscription was cancelled meanwhile is given
   * back too.
   */
  static <L> Mono<L> grant(
      Supplier<? extends CompletionStage<L>> acquire, Class<L> type, Consumer<? super L> giveBack) {
    return fromStage(acquire, giveBack).doOnDiscard(type, giveBack);
  }

  /** Gives back a grant nobody will use; its failure only means it runs out with its lease. */
  static void releaseQuietly(Lease lease) {
    var unused = lease.releaseAsync();
  }

  /** Gives back a multi-lease nobody will use. */
  static void releaseQuietly(MultiLease lease) {
    var unused = lease.releaseAsync();
  }

  private static Throwable unwrap(Throwable failure) {
    return failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause()
        : failure;
  }
}
