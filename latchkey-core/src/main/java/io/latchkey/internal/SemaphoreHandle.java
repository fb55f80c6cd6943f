package io.latchkey.internal;

import io.latchkey.DistributedSemaphore;
import io.latchkey.Feature;
import io.latchkey.LatchkeyOptions;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.SemaphoreStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/** A counting semaphore: every operation is one bounded backend call; waiting is the engine's. */
final class SemaphoreHandle implements DistributedSemaphore {
  private final LatchkeyClient client;
  private final String name;

  SemaphoreHandle(LatchkeyClient client, String name) {
    this.client = client;
    this.name = name;
  }

  private SemaphoreStore store() {
    return client.backend().semaphores();
  }

  private String subject() {
    return "semaphore '" + name + "'";
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public boolean trySetPermits(int permits) {
    Arguments.initialPermits(permits);
    return Blocking.join(
        client
            .calls()
            .call(() -> "set permits of " + subject(), () -> store().trySetPermits(name, permits)));
  }

  @Override
  public void setPermits(int permits) {
    Arguments.initialPermits(permits);
    client.callNeeding(
        Feature.DRAIN_AND_SET_PERMITS,
        () -> "set permits of " + subject(),
        () -> store().setPermits(name, permits));
  }

  @Override
  public int drainPermits() {
    return client.callNeeding(
        Feature.DRAIN_AND_SET_PERMITS,
        () -> "drain permits of " + subject(),
        () -> store().drainPermits(name));
  }

  @Override
  public void addPermits(int delta) {
    Arguments.delta(delta);
    Blocking.join(
        client
            .calls()
            .call(() -> "add permits to " + subject(), () -> store().addPermits(name, delta)));
  }

  @Override
  public int availablePermits() {
    return Blocking.join(
        client
            .calls()
            .call(() -> "count permits of " + subject(), () -> store().availablePermits(name)));
  }

  @Override
  public boolean tryAcquire(int permits) {
    Arguments.permits(permits);
    return Blocking.join(start(permits, 0)) != null;
  }

  @Override
  public boolean tryAcquire(int permits, Duration wait) throws InterruptedException {
    Arguments.permits(permits);
    Arguments.wait(wait);
    return Blocking.await(start(permits, wait.toNanos())) != null;
  }

  @Override
  public void acquire(int permits) throws InterruptedException {
    Arguments.permits(permits);
    Blocking.await(start(permits, -1));
  }

  @Override
  public CompletionStage<Void> acquireAsync(int permits) {
    return acquireAsync(permits, -1, LatchkeyOptions.MAX_DURATION);
  }

  @Override
  public void acquire(int permits, Duration wait) throws InterruptedException {
    Arguments.permits(permits);
    Arguments.wait(wait);
    Results.orTimeout(Blocking.await(start(permits, wait.toNanos())), () -> what(permits), wait);
  }

  @Override
  public CompletionStage<Void> acquireAsync(int permits, Duration wait) {
    Arguments.wait(wait);
    return acquireAsync(permits, wait.toNanos(), wait);
  }

  /** The async acquire forms: below zero, {@code waitNanos} waits for ever. */
  private CompletionStage<Void> acquireAsync(int permits, long waitNanos, Duration wait) {
    Arguments.permits(permits);
    CompletableFuture<Boolean> taken =
        client.acquiredAsync(
            start(permits, waitNanos), () -> what(permits), wait, late -> releaseAsync(permits));
    return Results.map(taken, done -> null);
  }

  private String what(int permits) {
    return "acquire " + permits + " permit(s) of " + subject();
  }

  private CompletableFuture<@Nullable Boolean> start(int permits, long waitNanos) {
    client.ensureOpen();
    Acquisition.WaitPlan plan =
        Acquisition.WaitPlan.ownerless(
            ResourceType.SEMAPHORE, name, false, waitNanos, client.options());
    return new Acquisition<>(
            client,
            plan,
            Acquisition.Strategy.<Boolean>of(
                () ->
                    client
                        .calls()
                        .call(
                            () -> what(permits),
                            () -> store().tryAcquire(name, permits),
                            lateTaken -> {
                              // Taken after the call timed out: give them back, once.
                              if (lateTaken) {
                                releaseAsync(permits);
                              }
                            })
                        .thenApply(
                            taken ->
                                taken
                                    ? Acquisition.Attempt.granted(Boolean.TRUE)
                                    : Acquisition.Attempt.<Boolean>busy(-1)),
                taken -> releaseAsync(permits)))
        .start();
  }

  @Override
  public void release(int permits) {
    Blocking.join(releaseAsync(permits).toCompletableFuture());
  }

  @Override
  public CompletionStage<Void> releaseAsync(int permits) {
    Arguments.permits(permits);
    return client.toCaller(
        client
            .calls()
            .call(
                () -> "release " + permits + " permit(s) of " + subject(),
                () -> store().addPermits(name, permits)));
  }

  @Override
  public boolean releaseIfExists(int permits) {
    return Blocking.join(releaseIfExistsAsync(permits).toCompletableFuture());
  }

  @Override
  public CompletionStage<Boolean> releaseIfExistsAsync(int permits) {
    Arguments.permits(permits);
    client.require(Feature.DELETE_RECORDS);
    return client.toCaller(
        client
            .calls()
            .call(
                () -> "release " + permits + " permit(s) of " + subject() + " if it exists",
                () -> store().addPermitsIfExists(name, permits)));
  }

  @Override
  public boolean delete() {
    return client.callNeeding(
        Feature.DELETE_RECORDS, () -> "delete " + subject(), () -> store().delete(name));
  }

  @Override
  public boolean isExists() {
    return client.callNeeding(
        Feature.DELETE_RECORDS, () -> "look for " + subject(), () -> store().exists(name));
  }

  @Override
  public String toString() {
    return "Semaphore['" + name + "' on " + client.backendDescription() + "]";
  }
}
