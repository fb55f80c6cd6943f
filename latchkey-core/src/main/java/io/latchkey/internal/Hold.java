package io.latchkey.internal;

import io.latchkey.LeaseLostException;
import io.latchkey.LockMode;
import io.latchkey.spi.HolderRef;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * What this client knows of one holder's lease: hold counts per mode (mirroring the backend's
 * answers), the fencing token, whether the watchdog renews it, until when it is known to be valid,
 * and whether it was lost.
 *
 * <p>A lost hold stays registered until every local hold on it has been released, so that each of
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
  private final List<Consumer<LeaseLostException>> listeners = new ArrayList<>();

  Hold(HolderRef ref) {
    this.ref = ref;
  }

  synchronized void granted(
      LockMode mode, int holdsInMode, long token, boolean renewed, long sentAt, long lease) {
    if (mode == LockMode.SHARED) {
      sharedHolds = holdsInMode;
    } else {
      exclusiveHolds = holdsInMode;
    }
    fencingToken = token;
    if (renewed) {
      watchdog = true;
      leaseNanos = lease;
    }
    extendValidity(sentAt + lease);
  }

  /** Records the backend's count after a release; returns the holds left in all modes. */
  synchronized int released(LockMode mode, int remaining) {
    if (mode == LockMode.SHARED) {
      sharedHolds = remaining;
    } else {
      exclusiveHolds = remaining;
    }
    return sharedHolds + exclusiveHolds;
  }

  /** Forgets one local hold of a lost lease; returns the holds left. */
  synchronized int dropOne(LockMode mode) {
    if (mode == LockMode.SHARED) {
      sharedHolds = Math.max(0, sharedHolds - 1);
    } else {
      exclusiveHolds = Math.max(0, exclusiveHolds - 1);
    }
    return sharedHolds + exclusiveHolds;
  }

  /** A renewal sent at {@code sentAt} was confirmed. */
  synchronized void renewed(long sentAt) {
    extendValidity(sentAt + leaseNanos);
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
