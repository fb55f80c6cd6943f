package io.latchkey.internal;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockTimeoutException;
import io.latchkey.MultiLease;
import io.latchkey.MultiLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * A multi-lock: its members sorted once into the global order (by the identity of their lock
 * service, then by name), taken one after another, released in reverse order.
 */
public final class MultiLockHandle implements MultiLock {
  private final List<DistributedLock> members;

  private MultiLockHandle(List<DistributedLock> members) {
    this.members = members;
  }

  /**
   * @param locks the members
   * @return the multi-lock, its members in the global order
   */
  public static MultiLock of(DistributedLock... locks) {
    Objects.requireNonNull(locks, "locks must not be null");
    if (locks.length == 0) {
      throw new IllegalArgumentException("a multi-lock needs at least one lock");
    }
    List<DistributedLock> sorted = new ArrayList<>(Arrays.asList(locks));
    Set<String> keys = new HashSet<>();
    for (DistributedLock lock : sorted) {
      Objects.requireNonNull(lock, "a member of the multi-lock is null");
      if (!keys.add(key(lock))) {
        throw new IllegalArgumentException(
            "lock '" + lock.name() + "' appears twice in the multi-lock");
      }
    }
    sorted.sort(Comparator.comparing(MultiLockHandle::key));
    return new MultiLockHandle(Collections.unmodifiableList(sorted));
  }

  @Override
  public List<DistributedLock> members() {
    return members;
  }

  @Override
  public MultiLease acquire(Duration wait) throws InterruptedException {
    return acquire(wait, null);
  }

  @Override
  public MultiLease acquire(Duration wait, @Nullable Duration leaseTime)
      throws InterruptedException {
    Objects.requireNonNull(wait, "wait must not be null");
    if (wait.isNegative()) {
      throw new IllegalArgumentException("wait must not be negative, was " + wait);
    }
    long deadline = System.nanoTime() + wait.toNanos();
    List<Lease> taken = new ArrayList<>(members.size());
    try {
      for (DistributedLock member : members) {
        Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
        taken.add(leaseTime == null ? member.acquire(left) : member.acquire(left, leaseTime));
      }
      return new MultiLeaseGrant(taken);
    } catch (InterruptedException | RuntimeException e) {
      try {
        releaseAll(taken);
      } catch (RuntimeException releaseFailure) {
        e.addSuppressed(releaseFailure);
      }
      throw e;
    }
  }

  @Override
  public Optional<MultiLease> tryAcquire() {
    List<Lease> taken = new ArrayList<>(members.size());
    try {
      for (DistributedLock member : members) {
        Optional<Lease> lease = member.tryAcquire();
        if (lease.isEmpty()) {
          releaseAll(taken);
          return Optional.empty();
        }
        taken.add(lease.get());
      }
    } catch (RuntimeException e) {
      try {
        releaseAll(taken);
      } catch (RuntimeException releaseFailure) {
        e.addSuppressed(releaseFailure);
      }
      throw e;
    }
    return Optional.of(new MultiLeaseGrant(taken));
  }

  @Override
  public CompletionStage<MultiLease> acquireAsync(Duration wait) {
    return acquireAsync(wait, null);
  }

  @Override
  public CompletionStage<MultiLease> acquireAsync(Duration wait, @Nullable Duration leaseTime) {
    Objects.requireNonNull(wait, "wait must not be null");
    if (wait.isNegative()) {
      throw new IllegalArgumentException("wait must not be negative, was " + wait);
    }
    long deadline = System.nanoTime() + wait.toNanos();
    // Thread-owned members belong to the calling thread even though later members are asked for
    // on whichever thread answered the previous one.
    List<DistributedLock> bound = new ArrayList<>(members.size());
    for (DistributedLock member : members) {
      bound.add(handle(member).boundToCurrentOwner());
    }
    AsyncAcquisition acquisition = new AsyncAcquisition(bound, deadline, leaseTime);
    acquisition.next();
    return acquisition.result;
  }

  /**
   * Takes the members one after another. Cancelling the result cancels the member request in flight
   * (whose own late grant is then released) and releases the members already taken.
   */
  private static final class AsyncAcquisition {
    private final List<DistributedLock> members;
    private final long deadline;
    private final @Nullable Duration leaseTime;
    private final List<Lease> taken = new ArrayList<>();
    private final CompletableFuture<MultiLease> result = new CompletableFuture<>();
    private @Nullable CompletableFuture<Lease> inFlight;

    @SuppressWarnings("FutureReturnValueIgnored") // the handler deals with every outcome itself
    AsyncAcquisition(List<DistributedLock> members, long deadline, @Nullable Duration leaseTime) {
      this.members = members;
      this.deadline = deadline;
      this.leaseTime = leaseTime;
      result.whenComplete(
          (lease, failure) -> {
            if (failure != null) {
              abandon();
            }
          });
    }

    @SuppressWarnings("FutureReturnValueIgnored") // the handler deals with every outcome itself
    synchronized void next() {
      if (result.isDone()) {
        return;
      }
      if (taken.size() == members.size()) {
        result.complete(new MultiLeaseGrant(taken));
        return;
      }
      Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
      DistributedLock member = members.get(taken.size());
      CompletableFuture<Lease> request =
          (leaseTime == null ? member.acquireAsync(left) : member.acquireAsync(left, leaseTime))
              .toCompletableFuture();
      inFlight = request;
      request.whenComplete(
          (lease, failure) -> {
            if (failure != null) {
              fail(failure);
              return;
            }
            synchronized (this) {
              if (result.isDone()) {
                lease.releaseAsync();
                return;
              }
              taken.add(lease);
            }
            next();
          });
    }

    /**
     * A member could not be had. If its wait ran out (the backend answers), the members already
     * taken are released before the caller hears of it, so that the caller's next look finds them
     * free; any other failure is answered at once, within its bound.
     */
    @SuppressWarnings("FutureReturnValueIgnored") // the handler deals with every outcome itself
    private void fail(Throwable failure) {
      if (!(BackendCalls.unwrap(failure) instanceof LockTimeoutException)) {
        result.completeExceptionally(failure);
        return;
      }
      List<Lease> toRelease;
      synchronized (this) {
        toRelease = new ArrayList<>(taken);
        taken.clear();
      }
      CompletableFuture<?>[] releases = new CompletableFuture<?>[toRelease.size()];
      for (int i = 0; i < releases.length; i++) {
        releases[i] = toRelease.get(i).releaseAsync().toCompletableFuture();
      }
      CompletableFuture.allOf(releases)
          .whenComplete((released, releaseFailure) -> result.completeExceptionally(failure));
    }

    private void abandon() {
      CompletableFuture<Lease> request;
      List<Lease> toRelease;
      synchronized (this) {
        request = inFlight;
        toRelease = new ArrayList<>(taken);
        taken.clear();
      }
      if (request != null) {
        request.cancel(false);
      }
      for (Lease lease : toRelease) {
        lease.releaseAsync();
      }
    }
  }

  /** Releases the leases in reverse order; the first failure is thrown after all were tried. */
  static void releaseAll(List<Lease> leases) {
    @Nullable RuntimeException first = null;
    for (int i = leases.size() - 1; i >= 0; i--) {
      try {
        leases.get(i).release();
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  /**
   * The place of a member in the global order: by the identity of its lock service, then by name.
   * Every process that uses the same lock service and names computes the same order, however it
   * spelled the URI ({@link io.latchkey.spi.LatchkeyBackend#identity()}).
   */
  private static String key(DistributedLock lock) {
    return handle(lock).client.backend().identity() + '\u0000' + lock.name();
  }

  private static LockHandle handle(DistributedLock lock) {
    if (lock instanceof LockHandle handle) {
      return handle;
    }
    throw new IllegalArgumentException(
        "a multi-lock takes locks made by latchkey, not " + lock.getClass().getName());
  }
}
