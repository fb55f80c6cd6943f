package io.latchkey;

import io.latchkey.internal.LockOrdering;
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
 * Holds several locks, possibly of different clients and backends, all or none (Redisson's
 * multi-lock, Curator's multi-lock).
 *
 * <p>Members are always acquired in one global order (by backend, then name), whatever order they
 * were given in, so two multi-locks that share members cannot deadlock: whoever takes the first
 * shared member first gets them all. If a member cannot be had within the wait, the members already
 * taken are released before the failure is reported. Each member follows its own owner rules (a
 * thread-owned member belongs to the calling thread).
 */
public final class MultiLock {
  private final List<DistributedLock> members;

  private MultiLock(List<DistributedLock> members) {
    this.members = members;
  }

  /**
   * @param locks the members, at least one, no lock twice
   * @return the multi-lock
   * @throws IllegalArgumentException if empty, if a lock appears twice, or if a member was not made
   *     by latchkey
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
      if (!keys.add(LockOrdering.key(lock))) {
        throw new IllegalArgumentException(
            "lock '" + lock.name() + "' appears twice in the multi-lock");
      }
    }
    sorted.sort(Comparator.comparing(LockOrdering::key));
    return new MultiLock(Collections.unmodifiableList(sorted));
  }

  /**
   * @return the members, in acquisition order
   */
  public List<DistributedLock> members() {
    return members;
  }

  /**
   * Waits at most {@code wait} in all for every member; the watchdog keeps them alive.
   *
   * @param wait the total wait
   * @return the grant
   * @throws LockTimeoutException if some member was not acquired in time (none is held then)
   * @throws InterruptedException if interrupted (none is held then)
   */
  public MultiLease acquire(Duration wait) throws InterruptedException {
    return acquire(wait, null);
  }

  /**
   * Waits at most {@code wait} in all for every member, each held at most {@code leaseTime}.
   *
   * @param wait the total wait
   * @param leaseTime the members' lease, or null for the watchdog
   * @return the grant
   * @throws LockTimeoutException if some member was not acquired in time (none is held then)
   * @throws InterruptedException if interrupted (none is held then)
   */
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
      return new MultiLease(taken);
    } catch (InterruptedException | RuntimeException e) {
      try {
        releaseAll(taken);
      } catch (RuntimeException releaseFailure) {
        e.addSuppressed(releaseFailure);
      }
      throw e;
    }
  }

  /**
   * Takes every member if all are free now.
   *
   * @return the grant, or empty (nothing held)
   */
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
    return Optional.of(new MultiLease(taken));
  }

  /**
   * Asynchronous {@link #acquire(Duration)}: members are requested one after another in the global
   * order; the owner of thread-owned members is the calling thread. Cancelling the returned future
   * abandons the wait and releases the members taken so far.
   *
   * @param wait the total wait
   * @return the grant, or fails with {@link LockTimeoutException} (nothing held)
   */
  public CompletionStage<MultiLease> acquireAsync(Duration wait) {
    return acquireAsync(wait, null);
  }

  /**
   * Asynchronous {@link #acquire(Duration, Duration)}.
   *
   * @param wait the total wait
   * @param leaseTime the members' lease, or null for the watchdog
   * @return the grant, or fails with {@link LockTimeoutException} (nothing held)
   */
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
      bound.add(LockOrdering.bindToCurrentOwner(member));
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

    // Handler futures left unread on purpose: its handler routes the outcome into result itself.
    @SuppressWarnings("FutureReturnValueIgnored")
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

    // Handler futures left unread on purpose: its handler routes the outcome into result itself.
    @SuppressWarnings("FutureReturnValueIgnored")
    synchronized void next() {
      if (result.isDone()) {
        return;
      }
      if (taken.size() == members.size()) {
        result.complete(new MultiLease(taken));
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
              result.completeExceptionally(failure);
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
}
