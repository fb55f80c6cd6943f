package io.latchkey.internal;

import io.latchkey.Lease;
import io.latchkey.LeasedSemaphore;
import io.latchkey.LockMode;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.ResourceType;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A semaphore of leased permits. Each acquisition picks one random permit id and keeps it across
 * its retries, so that an attempt whose answer was lost can be released by id without touching
 * anyone else's permit.
 */
final class LeasedSemaphoreHandle implements LeasedSemaphore {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final LatchkeyClient client;
  private final String name;

  LeasedSemaphoreHandle(LatchkeyClient client, String name) {
    this.client = client;
    this.name = name;
  }

  private LeasedSemaphoreStore store() {
    return client.backend().leasedSemaphores();
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
  public Optional<Lease> tryAcquire(Duration leaseTime) {
    Arguments.leaseTime(leaseTime);
    return Optional.ofNullable(Blocking.join(start(0, leaseTime)));
  }

  @Override
  public CompletionStage<Lease> acquireAsync(Duration wait) {
    Arguments.wait(wait);
    return Results.orTimeoutAsync(start(wait.toNanos(), null), this::what, wait);
  }

  @Override
  public CompletionStage<Lease> acquireAsync(Duration wait, Duration leaseTime) {
    Arguments.wait(wait);
    Arguments.leaseTime(leaseTime);
    return Results.orTimeoutAsync(start(wait.toNanos(), leaseTime), this::what, wait);
  }

  private String what() {
    return "acquire a permit of " + subject();
  }

  private CompletableFuture<@Nullable Lease> start(long waitNanos, @Nullable Duration leaseTime) {
    client.ensureOpen();
    byte[] id = new byte[16];
    RANDOM.nextBytes(id);
    String permitId = HexFormat.of().formatHex(id);
    boolean watchdog = leaseTime == null;
    long leaseMillis =
        leaseTime == null ? client.options().leaseTime().toMillis() : leaseTime.toMillis();
    return new Acquisition<Lease>(
            client,
            ResourceType.LEASED_SEMAPHORE,
            name,
            null,
            false,
            waitNanos,
            client.options().recheckInterval().toNanos(),
            () -> {
              long sentAt = client.options().ticker().nanoTime();
              return client
                  .calls()
                  .call(() -> what(), () -> store().tryAcquire(name, permitId, leaseMillis))
                  .handle(
                      (answer, failure) -> {
                        if (failure != null) {
                          releaseQuietly(permitId);
                          throw LatchkeyClient.asRuntime(failure);
                        }
                        if (!answer.isGranted()) {
                          return Acquisition.Attempt.<Lease>busy(answer.retryAfterMillis());
                        }
                        Hold hold =
                            client.permitGranted(
                                name,
                                permitId,
                                answer.fencingToken(),
                                watchdog,
                                sentAt,
                                TimeUnit.MILLISECONDS.toNanos(leaseMillis));
                        return Acquisition.Attempt.<Lease>granted(
                            new HoldLease(client, hold, LockMode.EXCLUSIVE));
                      });
            },
            Lease::releaseAsync,
            () -> {})
        .start();
  }

  /** An attempt whose answer was lost may have been granted: give the permit back by its id. */
  private void releaseQuietly(String permitId) {
    client
        .calls()
        .call(
            () -> "release uncertain permit of " + subject(), () -> store().release(name, permitId))
        .exceptionally(e -> false);
  }

  @Override
  public boolean release(String permitId) {
    return Blocking.join(releaseAsync(permitId).toCompletableFuture());
  }

  @Override
  public CompletionStage<Boolean> releaseAsync(String permitId) {
    Arguments.permitId(permitId);
    client.ensureOpen();
    Hold hold = client.holds().find(new HolderRef(ResourceType.LEASED_SEMAPHORE, name, permitId));
    if (hold != null) {
      // A permit this client granted: release it as its lease would, but answer "not held"
      // instead of throwing when it was lost.
      return client
          .release(hold, LockMode.EXCLUSIVE)
          .handle(
              (ok, failure) -> {
                if (failure == null) {
                  return true;
                }
                if (BackendCalls.unwrap(failure) instanceof io.latchkey.LeaseLostException) {
                  return false;
                }
                throw LatchkeyClient.asRuntime(failure);
              });
    }
    return client
        .calls()
        .call(
            () -> "release permit " + permitId + " of " + subject(),
            () -> store().release(name, permitId));
  }

  @Override
  public String toString() {
    return "LeasedSemaphore['" + name + "' on " + client.backendDescription() + "]";
  }
}
