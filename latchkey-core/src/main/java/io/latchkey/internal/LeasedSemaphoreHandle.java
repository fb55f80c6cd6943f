package io.latchkey.internal;

import io.latchkey.Lease;
import io.latchkey.LeasedSemaphore;
import io.latchkey.LockMode;
import io.latchkey.spi.GrantRef;
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
final class LeasedSemaphoreHandle extends LeaseIssuingHandle implements LeasedSemaphore {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final String name;

  LeasedSemaphoreHandle(LatchkeyClient client, String name) {
    super(client);
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
  public Optional<Lease> tryAcquire(Duration leaseTime) {
    Arguments.leaseTime(leaseTime);
    return Optional.ofNullable(tryOnce(leaseTime));
  }

  @Override
  String what() {
    return "acquire a permit of " + subject();
  }

  @Override
  CompletableFuture<@Nullable Lease> start(long waitNanos, @Nullable Duration leaseTime) {
    client.ensureOpen();
    client.requireLeaseTime(leaseTime);
    byte[] id = new byte[16];
    RANDOM.nextBytes(id);
    String permitId = HexFormat.of().formatHex(id);
    boolean watchdog = leaseTime == null;
    long leaseMillis = (leaseTime == null ? client.options().leaseTime() : leaseTime).toMillis();
    Acquisition.WaitPlan plan =
        Acquisition.WaitPlan.ownerless(
            ResourceType.LEASED_SEMAPHORE, name, false, waitNanos, client.options());
    return new Acquisition<>(
            client,
            plan,
            Acquisition.Strategy.<Lease>of(
                () -> {
                  long sentAt = client.options().ticker().nanoTime();
                  return client
                      .calls()
                      .call(
                          this::what,
                          () -> store().tryAcquire(name, permitId, leaseMillis),
                          late -> {
                            if (late.isGranted()) {
                              undo(permitId, "its answer came after the call timed out");
                            }
                          })
                      .thenApply(
                          answer -> {
                            if (!answer.isGranted()) {
                              return Acquisition.Attempt.<Lease>busy(
                                  answer.retryAfterMillis(), answer.retryWhen());
                            }
                            Hold hold =
                                client.permitGranted(
                                    name,
                                    permitId,
                                    answer,
                                    watchdog,
                                    sentAt,
                                    TimeUnit.MILLISECONDS.toNanos(leaseMillis));
                            // A permit that came too late to use was given back: try again.
                            return hold == null
                                ? Acquisition.Attempt.<Lease>undone()
                                : Acquisition.Attempt.<Lease>granted(
                                    new HoldLease(client, hold, LockMode.EXCLUSIVE));
                          });
                },
                Lease::releaseAsync))
        .start();
  }

  /** Gives a permit nobody will use back, by its id, once. */
  private void undo(String permitId, String why) {
    client
        .ledger()
        .undo(
            new GrantRef(new HolderRef(ResourceType.LEASED_SEMAPHORE, name, permitId), 1),
            LockMode.EXCLUSIVE,
            why);
  }

  @Override
  public boolean release(String permitId) {
    return Blocking.join(releaseAsync(permitId).toCompletableFuture());
  }

  @Override
  public CompletionStage<Boolean> releaseAsync(String permitId) {
    Arguments.permitId(permitId);
    client.ensureOpen();
    return client.toCaller(releasePermit(permitId));
  }

  private CompletableFuture<Boolean> releasePermit(String permitId) {
    Hold hold = client.ledger().find(new HolderRef(ResourceType.LEASED_SEMAPHORE, name, permitId));
    if (hold != null) {
      // A permit this client granted: release it as its lease would, but answer "not held"
      // instead of throwing when it was lost.
      return client
          .ledger()
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
