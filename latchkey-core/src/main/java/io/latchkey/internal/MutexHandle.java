package io.latchkey.internal;

import io.latchkey.DistributedMutex;
import io.latchkey.Feature;
import io.latchkey.Lease;
import io.latchkey.LockMode;
import io.latchkey.OwnerToken;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * A non-reentrant mutex: each acquire is a fresh owner token, so the backend sees every acquire as
 * a different owner and a second acquire waits even on the holding thread.
 */
final class MutexHandle implements DistributedMutex {
  private final LatchkeyClient client;
  private final String name;

  MutexHandle(LatchkeyClient client, String name) {
    this.client = client;
    this.name = name;
  }

  @Override
  public String name() {
    return name;
  }

  private CompletableFuture<@Nullable Lease> start(long waitNanos, @Nullable Duration leaseTime) {
    return client.acquireLock(
        name, OwnerToken.random().value(), LockMode.EXCLUSIVE, false, waitNanos, leaseTime);
  }

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
  public Optional<Lease> tryAcquire() {
    return Optional.ofNullable(Blocking.join(start(0, null)));
  }

  @Override
  public CompletionStage<Lease> acquireAsync(Duration wait) {
    Arguments.wait(wait);
    return client.toCaller(Results.orTimeoutAsync(start(wait.toNanos(), null), this::what, wait));
  }

  @Override
  public CompletionStage<Lease> acquireAsync(Duration wait, Duration leaseTime) {
    Arguments.wait(wait);
    Arguments.leaseTime(leaseTime);
    return client.toCaller(
        Results.orTimeoutAsync(start(wait.toNanos(), leaseTime), this::what, wait));
  }

  @Override
  public boolean isLocked() {
    client.require(Feature.ADMIN);
    return Blocking.join(
            client
                .calls()
                .call(
                    () -> "inspect mutex '" + name + "'",
                    () -> client.backend().admin().inspect(name)))
        .isPresent();
  }

  @Override
  public boolean forceUnlock() {
    return new Admin(client).forceRelease(name);
  }

  private String what() {
    return "acquire mutex '" + name + "'";
  }

  @Override
  public String toString() {
    return "Mutex['" + name + "' on " + client.backendDescription() + "]";
  }
}
