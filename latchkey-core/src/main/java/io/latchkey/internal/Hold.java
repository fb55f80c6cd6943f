package io.latchkey.internal;

import io.latchkey.LeaseLostException;
import io.latchkey.LockMode;
import io.latchkey.spi.HolderRef;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * What this client knows of one holder's lease: the grants this client made per mode, the fencing
 * token, whether the watchdog renews it, until when it is known to be valid, and whether it was
 * lost.
 *
 * <p>The counts are this client's own grants, not the backend's total for the owner: a token owner
 * may also hold grants made by another process, and this client must neither release those on close
 * nor keep them alive with its watchdog once its own grants are released.
 *
 * <p>A lost hold stays registered until every local grant on it has been released, so that each of
 * those releases can report the loss instead of "not held".
 */
final class Hold {
  final HolderRef ref;
  private int sharedHolds;
  private int exclusiveHolds;
  private long fencingToken;
  private boolean watchdog;
  private long leaseNanos;
  private long validUntilNanos;
  private volatile @Nullable LeaseLostException lost;
  private @Nullable ScheduledFuture<?> expiryWatch;
  private final List<Consumer<LeaseLostException>> listeners = new ArrayList<>();

  Hold(HolderRef ref) {
    this.ref = ref;
  }

  synchronized void granted(LockMode mode, long token, boolean renewed, long sentAt, long lease) {
    if (mode == LockMode.SHARED) {
      sharedHolds++;
    } else {
      exclusiveHolds++;
    }
    fencingToken = token;
    if (renewed) {
      watchdog = true;
      leaseNanos = lease;
    }
    extendValidity(sentAt + lease - driftAllowance(lease));
  }

  /** Forgets one grant (released, or reported lost); returns the grants left in all modes. */
  synchronized int dropOne(LockMode mode) {
    if (mode == LockMode.SHARED) {
      sharedHolds = Math.max(0, sharedHolds - 1);
    } else {
      exclusiveHolds = Math.max(0, exclusiveHolds - 1);
    }
    int left = sharedHolds + exclusiveHolds;
    if (left == 0 && expiryWatch != null) {
      expiryWatch.cancel(false);
      expiryWatch = null;
    }
    return left;
  }

  /** Starts the explicit-lease timer unless one is pending. */
  synchronized void watchExpiry(Supplier<ScheduledFuture<?>> schedule) {
    if (expiryWatch == null) {
      expiryWatch = schedule.get();
    }
  }

  /** The explicit-lease timer fired. */
  synchronized void expiryChecked() {
    expiryWatch = null;
  }

  /** A renewal sent at {@code sentAt} was confirmed. */
  synchronized void renewed(long sentAt) {
    extendValidity(sentAt + leaseNanos - driftAllowance(leaseNanos));
  }

  /**
   * How much earlier than the backend this client gives a lease up: the backend may count in
   * coarser units (whole milliseconds) and its clock may run a little fast against ours, so a
   * client that believed in the full lease could still act on a lock the backend has already freed.
   * The allowance follows Redlock's: 1% of the lease plus 2 ms.
   */
  static long driftAllowance(long leaseNanos) {
    return leaseNanos / 100 + 2_000_000L;
  }

  private void extendValidity(long until) {
    if (validUntilNanos == 0 || until - validUntilNanos > 0) {
      validUntilNanos = until;
    }
  }

  synchronized int holds(LockMode mode) {
    return mode == LockMode.SHARED ? sharedHolds : exclusiveHolds;
  }

  synchronized int totalHolds() {
    return sharedHolds + exclusiveHolds;
  }

  synchronized long fencingToken() {
    return fencingToken;
  }

  synchronized boolean renewedByWatchdog() {
    return watchdog;
  }

  synchronized long validUntilNanos() {
    return validUntilNanos;
  }

  @Nullable LeaseLostException lost() {
    return lost;
  }

  /**
   * Marks the lease lost; returns the listeners to notify, or an empty list if it was lost already.
   */
  synchronized List<Consumer<LeaseLostException>> markLost(LeaseLostException reason) {
    if (lost != null) {
      return List.of();
    }
    lost = reason;
    List<Consumer<LeaseLostException>> toNotify = List.copyOf(listeners);
    listeners.clear();
    return toNotify;
  }

  /** Registers a listener; returns false (not registered) if the hold is already lost. */
  synchronized boolean addListener(Consumer<LeaseLostException> listener) {
    if (lost != null) {
      return false;
    }
    listeners.add(listener);
    return true;
  }
}
