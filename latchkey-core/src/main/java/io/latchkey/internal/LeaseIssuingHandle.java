package io.latchkey.internal;

import io.latchkey.Lease;
import io.latchkey.LeaseSource;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * The acquire forms of everything that hands out a {@link Lease}, written once: each checks its
 * arguments, starts the primitive's acquisition, and turns "the wait ran out" into {@link
 * io.latchkey.LockTimeoutException} (blocking forms) or a failed stage that completes on the
 * callback executor (async forms).
 */
abstract class LeaseIssuingHandle implements LeaseSource {
  final LatchkeyClient client;

  LeaseIssuingHandle(LatchkeyClient client) {
    this.client = client;
  }

  /**
   * Starts one acquisition.
   *
   * @param waitNanos how long to wait; zero tries once; below zero waits for ever
   * @param leaseTime an explicit lease time, or null for the watchdog
   * @return the lease, or null when the wait ran out
   */
  abstract CompletableFuture<@Nullable Lease> start(long waitNanos, @Nullable Duration leaseTime);

  /** What an acquire does, for the timeout message: e.g. {@code acquire lock 'orders/42'}. */
  abstract String what();

  @Override
  public Lease acquire(Duration wait) throws InterruptedException {
    Arguments.wait(wait);
    return Results.orTimeout(Blocking.await(start(wait.toNanos(), null)), this::what, wait);
  }

  @Override
  public Lease acquire(Duration wait, Duration leaseTime) throws InterruptedException {
    Arguments.wait(wait);
    Arguments.leaseTime(leaseTime);
    return Results.orTimeout(Blocking.await(start(wait.toNanos(), leaseTime)), this::what, wait);
  }

  @Override
  public CompletionStage<Lease> acquireAsync(Duration wait) {
    Arguments.wait(wait);
    return client.acquiredAsync(start(wait.toNanos(), null), this::what, wait, Lease::releaseAsync);
  }

  @Override
  public CompletionStage<Lease> acquireAsync(Duration wait, Duration leaseTime) {
    Arguments.wait(wait);
    Arguments.leaseTime(leaseTime);
    return client.acquiredAsync(
        start(wait.toNanos(), leaseTime), this::what, wait, Lease::releaseAsync);
  }

  /** One attempt without waiting; null if nothing was granted. */
  @Nullable Lease tryOnce(@Nullable Duration leaseTime) {
    return Blocking.join(start(0, leaseTime));
  }
}
