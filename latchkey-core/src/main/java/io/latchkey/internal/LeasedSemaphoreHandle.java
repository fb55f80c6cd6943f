package io.latchkey.internal;

import io.latchkey.Feature;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeasedSemaphore;
import io.latchkey.LeasedSemaphoreInfo;
import io.latchkey.LockMode;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.ResourceType;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A semaphore of leased permits. Each acquisition picks random permit ids (one per permit asked
 * for) and keeps them across its retries, so that an attempt whose answer was lost can be released
 * by id without touching anyone else's permit. Several permits are asked for in one atomic step
 * ({@link LeasedSemaphoreStore#tryAcquireAll}); one permit by the first edition's {@link
 * LeasedSemaphoreStore#tryAcquire}, which every backend has.
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
  public int acquiredPermits() {
    return new Admin(client)
        .inspectLeasedSemaphore(name)
        .map(LeasedSemaphoreInfo::acquiredPermits)
        .orElse(0);
  }

  @Override
  public List<Lease> heldPermits() {
    List<Lease> held = new ArrayList<>();
    for (Hold hold : client.ledger().all()) {
      if (hold.ref.type() == ResourceType.LEASED_SEMAPHORE
          && hold.ref.name().equals(name)
          && client.ledger().isValid(hold)) {
        held.add(new HoldLease(client, hold, LockMode.EXCLUSIVE));
      }
    }
    return held;
  }

  @Override
  public Optional<Lease> tryAcquire(Duration leaseTime) {
    Arguments.leaseTime(leaseTime);
    return Optional.ofNullable(tryOnce(leaseTime));
  }

  @Override
  public Lease acquire() throws InterruptedException {
    return Results.orTimeout(
        Blocking.await(start(-1, null)), this::what, LatchkeyOptions.MAX_DURATION);
  }

  @Override
  public CompletionStage<Lease> acquireAsync() {
    return client.acquiredAsync(
        start(-1, null), this::what, LatchkeyOptions.MAX_DURATION, Lease::releaseAsync);
  }

  @Override
  public List<Lease> tryAcquire(int permits) {
    List<Lease> taken = Blocking.join(startBatch(permits, 0, null));
    return taken == null ? List.of() : taken;
  }

  @Override
  public List<Lease> acquire(int permits) throws InterruptedException {
    return Results.orTimeout(
        Blocking.await(startBatch(permits, -1, null)),
        () -> what(permits),
        LatchkeyOptions.MAX_DURATION);
  }

  @Override
  public CompletionStage<List<Lease>> acquireAsync(int permits) {
    return client.acquiredAsync(
        startBatch(permits, -1, null),
        () -> what(permits),
        LatchkeyOptions.MAX_DURATION,
        LeasedSemaphoreHandle::releaseAll);
  }

  @Override
  public List<Lease> acquire(int permits, Duration wait) throws InterruptedException {
    Arguments.wait(wait);
    return Results.orTimeout(
        Blocking.await(startBatch(permits, wait.toNanos(), null)), () -> what(permits), wait);
  }

  @Override
  public List<Lease> acquire(int permits, Duration wait, Duration leaseTime)
      throws InterruptedException {
    Arguments.wait(wait);
    Arguments.leaseTime(leaseTime);
    return Results.orTimeout(
        Blocking.await(startBatch(permits, wait.toNanos(), leaseTime)), () -> what(permits), wait);
  }

  @Override
  public CompletionStage<List<Lease>> acquireAsync(int permits, Duration wait) {
    Arguments.wait(wait);
    return client.acquiredAsync(
        startBatch(permits, wait.toNanos(), null),
        () -> what(permits),
        wait,
        LeasedSemaphoreHandle::releaseAll);
  }

  @Override
  public CompletionStage<List<Lease>> acquireAsync(int permits, Duration wait, Duration leaseTime) {
    Arguments.wait(wait);
    Arguments.leaseTime(leaseTime);
    return client.acquiredAsync(
        startBatch(permits, wait.toNanos(), leaseTime),
        () -> what(permits),
        wait,
        LeasedSemaphoreHandle::releaseAll);
  }

  @SuppressWarnings("FutureReturnValueIgnored") // each release reports its own outcome
  private static void releaseAll(List<Lease> permits) {
    permits.forEach(Lease::releaseAsync);
  }

  @Override
  String what() {
    return "acquire a permit of " + subject();
  }

  private String what(int permits) {
    return "acquire " + permits + " permit(s) of " + subject();
  }

  @Override
  CompletableFuture<@Nullable Lease> start(long waitNanos, @Nullable Duration leaseTime) {
    return Results.map(
        acquisition(List.of(newPermitId()), waitNanos, leaseTime),
        permits -> permits == null ? null : permits.get(0));
  }

  private CompletableFuture<@Nullable List<Lease>> startBatch(
      int permits, long waitNanos, @Nullable Duration leaseTime) {
    Arguments.permits(permits);
    client.require(Feature.PERMIT_BATCHES);
    List<String> permitIds = new ArrayList<>();
    for (int i = 0; i < permits; i++) {
      permitIds.add(newPermitId());
    }
    return acquisition(permitIds, waitNanos, leaseTime);
  }

  private static String newPermitId() {
    byte[] id = new byte[16];
    RANDOM.nextBytes(id);
    return HexFormat.of().formatHex(id);
  }

  /**
   * Acquires the permits {@code permitIds}, all or none: one id by the single-permit operation,
   * several in one atomic step.
   */
  private CompletableFuture<@Nullable List<Lease>> acquisition(
      List<String> permitIds, long waitNanos, @Nullable Duration leaseTime) {
    client.ensureOpen();
    client.requirePermitLeaseTime(leaseTime);
    boolean watchdog = leaseTime == null;
    long leaseMillis = (leaseTime == null ? client.options().leaseTime() : leaseTime).toMillis();
    Acquisition.WaitPlan plan =
        Acquisition.WaitPlan.ownerless(
            ResourceType.LEASED_SEMAPHORE, name, false, waitNanos, client.options());
    return new Acquisition<>(
            client,
            plan,
            Acquisition.Strategy.<List<Lease>>of(
                () -> {
                  long sentAt = client.options().ticker().nanoTime();
                  return client
                      .calls()
                      .call(
                          () -> what(permitIds.size()),
                          () ->
                              permitIds.size() > 1
                                  ? store().tryAcquireAll(name, permitIds, leaseMillis)
                                  : watchdog
                                      ? store().tryAcquire(name, permitIds.get(0), leaseMillis)
                                      : store()
                                          .tryAcquireWithLease(name, permitIds.get(0), leaseMillis),
                          late -> {
                            if (late.isGranted()) {
                              permitIds.forEach(
                                  id -> undo(id, "its answer came after the call timed out"));
                            }
                          })
                      .thenApply(
                          answer -> {
                            if (!answer.isGranted()) {
                              return Acquisition.Attempt.<List<Lease>>busy(
                                  answer.retryAfterMillis(), answer.retryWhen());
                            }
                            return granted(
                                permitIds,
                                answer,
                                watchdog,
                                sentAt,
                                TimeUnit.MILLISECONDS.toNanos(leaseMillis));
                          });
                },
                LeasedSemaphoreHandle::releaseAll))
        .start();
  }

  /**
   * Registers granted permits. One that came too late to use was given back by the ledger; then the
   * others, granted in the same step, are given back too and the attempt goes on.
   */
  private Acquisition.Attempt<List<Lease>> granted(
      List<String> permitIds,
      io.latchkey.spi.AcquireResult answer,
      boolean watchdog,
      long sentAt,
      long leaseNanos) {
    List<Hold> holds = new ArrayList<>();
    boolean late = false;
    for (String permitId : permitIds) {
      Hold hold = client.permitGranted(name, permitId, answer, watchdog, sentAt, leaseNanos);
      if (hold == null) {
        late = true;
      } else {
        holds.add(hold);
      }
    }
    if (late) {
      holds.forEach(
          hold ->
              client
                  .ledger()
                  .release(hold, LockMode.EXCLUSIVE)
                  .exceptionally(failure -> null)); // it runs out with its lease if this fails
      return Acquisition.Attempt.undone();
    }
    List<Lease> leases = new ArrayList<>();
    holds.forEach(hold -> leases.add(new HoldLease(client, hold, LockMode.EXCLUSIVE)));
    return Acquisition.Attempt.granted(List.copyOf(leases));
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

  @Override
  public boolean release(List<String> permitIds) {
    return Blocking.join(releaseAsync(permitIds).toCompletableFuture());
  }

  @Override
  public CompletionStage<Boolean> releaseAsync(List<String> permitIds) {
    java.util.Objects.requireNonNull(permitIds, "permitIds must not be null");
    if (permitIds.isEmpty()) {
      throw new IllegalArgumentException("permitIds must not be empty");
    }
    permitIds.forEach(Arguments::permitId);
    if (new HashSet<>(permitIds).size() != permitIds.size()) {
      throw new IllegalArgumentException("permitIds must not repeat an id, were " + permitIds);
    }
    client.require(Feature.PERMIT_BATCHES);
    client.ensureOpen();
    List<String> ids = List.copyOf(permitIds);
    List<Hold> local = new ArrayList<>();
    for (String id : ids) {
      Hold hold = client.ledger().find(new HolderRef(ResourceType.LEASED_SEMAPHORE, name, id));
      if (hold != null) {
        local.add(hold);
      }
    }
    return client.toCaller(
        client
            .ledger()
            .releaseTogether(
                local,
                () ->
                    client
                        .calls()
                        .call(
                            () -> "release " + ids.size() + " permits of " + subject(),
                            () -> store().releaseAll(name, ids))));
  }

  @Override
  public boolean updateLeaseTime(String permitId, Duration leaseTime) {
    return Blocking.join(updateLeaseTimeAsync(permitId, leaseTime).toCompletableFuture());
  }

  @Override
  public CompletionStage<Boolean> updateLeaseTimeAsync(String permitId, Duration leaseTime) {
    Arguments.permitId(permitId);
    Arguments.leaseTime(leaseTime);
    client.require(Feature.PERMIT_LEASE_UPDATE);
    client.requirePermitLeaseTime(leaseTime);
    client.ensureOpen();
    Hold hold = client.ledger().find(new HolderRef(ResourceType.LEASED_SEMAPHORE, name, permitId));
    long leaseMillis = leaseTime.toMillis();
    long sentAt = client.options().ticker().nanoTime();
    CompletableFuture<Boolean> updated =
        client
            .calls()
            .call(
                () -> "update the lease of permit " + permitId + " of " + subject(),
                () -> store().updateLease(name, permitId, leaseMillis));
    if (hold != null) {
      updated =
          updated.thenApply(
              held -> {
                if (held) {
                  client.ledger().leaseUpdated(hold, sentAt, leaseTime.toNanos());
                }
                return held;
              });
    }
    return client.toCaller(updated);
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
