package io.latchkey.internal;

import io.latchkey.DistributedLock;
import io.latchkey.Feature;
import io.latchkey.HolderInfo;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LockMode;
import io.latchkey.LockUpgradeException;
import io.latchkey.OwnerToken;
import io.latchkey.Primitive;
import io.latchkey.spi.CallerWaits;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.ResourceType;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A reentrant lock, fair lock, or one side of a read-write lock: a view naming the lock, the mode
 * and the owner (the calling thread unless bound to an explicit owner).
 */
final class LockHandle extends LeaseIssuingHandle implements DistributedLock {
  private final String name;
  private final Primitive primitive;
  private final LockMode mode;
  private final boolean fair;
  private final @Nullable String boundOwner;
  // The holder record of the owner this handle last served: a handle is mostly used by one owner,
  // so a lock/unlock cycle need not build it twice.
  private volatile @Nullable HolderRef lastHolder;

  /**
   * @param primitive {@link Primitive#LOCK}, {@link Primitive#FAIR_LOCK}, {@link
   *     Primitive#READ_LOCK} or {@link Primitive#WRITE_LOCK}
   */
  LockHandle(LatchkeyClient client, String name, Primitive primitive, @Nullable String boundOwner) {
    super(client);
    this.name = name;
    this.primitive = primitive;
    this.mode = primitive == Primitive.READ_LOCK ? LockMode.SHARED : LockMode.EXCLUSIVE;
    this.fair = primitive == Primitive.FAIR_LOCK;
    this.boundOwner = boundOwner;
  }

  @Override
  public String name() {
    return name;
  }

  String owner() {
    return boundOwner != null ? boundOwner : client.currentThreadOwner();
  }

  private HolderRef holder(String owner) {
    HolderRef last = lastHolder;
    if (last != null && last.holderId().equals(owner)) {
      return last;
    }
    HolderRef fresh = new HolderRef(ResourceType.LOCK, name, owner);
    lastHolder = fresh;
    return fresh;
  }

  @Override
  CompletableFuture<@Nullable Lease> start(long waitNanos, @Nullable Duration leaseTime) {
    return client.acquireLock(primitive, holder(owner()), mode, fair, waitNanos, leaseTime);
  }

  @Override
  String what() {
    return "acquire "
        + (mode == LockMode.SHARED ? "the read side of " : "")
        + "lock '"
        + name
        + "'";
  }

  @Override
  public Optional<Lease> tryAcquire() {
    try {
      return Optional.ofNullable(tryOnce(null));
    } catch (LockUpgradeException upgrade) {
      return Optional.empty();
    }
  }

  @Override
  public void lock() {
    Blocking.awaitUninterruptibly(awaitedByCaller(() -> start(-1, null)));
  }

  @Override
  public void lock(Duration leaseTime) {
    Arguments.leaseTime(leaseTime);
    Blocking.awaitUninterruptibly(awaitedByCaller(() -> start(-1, leaseTime)));
  }

  /**
   * Starts an operation that the calling thread then waits for, blocked ({@link CallerWaits}).
   *
   * @param operation starts it
   * @return its stage
   */
  private static <T> CompletableFuture<T> awaitedByCaller(
      Supplier<CompletableFuture<T>> operation) {
    CallerWaits.begin();
    try {
      return operation.get();
    } finally {
      CallerWaits.end();
    }
  }

  @Override
  public void lockInterruptibly() throws InterruptedException {
    Blocking.await(start(-1, null));
  }

  @Override
  public boolean tryLock() {
    return tryAcquire().isPresent();
  }

  /**
   * The {@link java.util.concurrent.locks.Lock} form: as in {@code java.util.concurrent}, a wait
   * too long to matter (such as {@code Long.MAX_VALUE} days) means waiting for as long as it takes,
   * and a negative one means not waiting.
   */
  @Override
  public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
    Objects.requireNonNull(unit, "unit must not be null");
    long nanos = unit.toNanos(Math.max(0, time));
    return tried(start(nanos > LatchkeyOptions.MAX_DURATION.toNanos() ? -1 : nanos, null));
  }

  @Override
  public boolean tryLock(Duration wait) throws InterruptedException {
    Arguments.wait(wait);
    return tried(start(wait.toNanos(), null));
  }

  @Override
  public boolean tryLock(Duration wait, Duration leaseTime) throws InterruptedException {
    Arguments.wait(wait);
    Arguments.leaseTime(leaseTime);
    return tried(start(wait.toNanos(), leaseTime));
  }

  /**
   * The answer of a {@code tryLock} form: as {@link java.util.concurrent.locks.Lock#tryLock()}
   * says, false when the lock cannot be had, including the write side asked for by an owner that
   * holds only the read side (the acquire and lock forms throw {@link LockUpgradeException}).
   */
  private static boolean tried(CompletableFuture<@Nullable Lease> attempt)
      throws InterruptedException {
    try {
      return Blocking.await(attempt) != null;
    } catch (LockUpgradeException upgrade) {
      return false;
    }
  }

  @Override
  public void unlock() {
    Blocking.join(awaitedByCaller(() -> unlockFor(owner())));
  }

  @Override
  public CompletionStage<Void> unlockAsync() {
    return client.toCaller(unlockFor(owner()));
  }

  private CompletableFuture<Void> unlockFor(String owner) {
    client.ensureOpen();
    HolderRef ref = holder(owner);
    Hold hold = client.ledger().find(ref);
    if (hold != null && hold.holds(mode) > 0) {
      return client.ledger().release(hold, mode);
    }
    if (client.isThreadOwner(owner)) {
      return CompletableFuture.failedFuture(
          new IllegalMonitorStateException(
              "lock '" + name + "' is not held by thread " + Thread.currentThread().getName()));
    }
    // A token owner may release a hold that another thread or process of that owner took; it
    // cannot know that grant's fencing token.
    client.require(Feature.REMOTE_OWNER_TOKENS);
    return client
        .calls()
        .call(
            () -> "release lock '" + name + "'",
            () -> client.backend().locks().release(new GrantRef(ref, GrantRef.ANY_TOKEN), mode))
        .thenApply(
            result -> {
              if (!result.wasHeld()) {
                throw new IllegalMonitorStateException(
                    "lock '" + name + "' is not held by the given owner token");
              }
              return null;
            });
  }

  @Override
  public boolean isLocked() {
    return holders().findAny().isPresent();
  }

  @Override
  public boolean isHeldByCurrentOwner() {
    Hold hold = client.ledger().find(holder(owner()));
    return hold != null && hold.lost() == null && hold.holds(mode) > 0;
  }

  @Override
  public int holdCount() {
    Hold hold = client.ledger().find(holder(owner()));
    return hold == null ? 0 : hold.holds(mode);
  }

  @Override
  public Optional<Duration> remainingLease() {
    return holders().map(HolderInfo::remainingLease).max(Duration::compareTo);
  }

  private java.util.stream.Stream<HolderInfo> holders() {
    client.require(Feature.ADMIN);
    return Blocking.join(
            client
                .calls()
                .call(
                    () -> "inspect lock '" + name + "'",
                    () -> client.backend().admin().inspect(name)))
        .stream()
        .flatMap(info -> info.holders().stream())
        .filter(holder -> holder.mode() == mode);
  }

  @Override
  public boolean forceUnlock() {
    return new Admin(client).forceRelease(name);
  }

  @Override
  public boolean requestRevocation() {
    return client.revocations().request("lock", name);
  }

  @Override
  public DistributedLock withOwner(OwnerToken owner) {
    Objects.requireNonNull(owner, "owner must not be null");
    return new LockHandle(client, name, primitive, owner.value());
  }

  /** The same lock bound to the owner the calling thread would use now. */
  LockHandle boundToCurrentOwner() {
    return new LockHandle(client, name, primitive, owner());
  }

  @Override
  public Condition newCondition() {
    throw new UnsupportedOperationException(
        "distributed locks have no conditions; use a count-down latch or a semaphore to signal");
  }

  @Override
  public String toString() {
    return (fair ? "FairLock['" : mode == LockMode.SHARED ? "ReadLock['" : "Lock['")
        + name
        + "' on "
        + client.backendDescription()
        + "]";
  }
}
