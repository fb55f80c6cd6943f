package io.latchkey.internal;

import io.latchkey.LeaseListener;
import io.latchkey.LeaseLostException;
import io.latchkey.LockMode;
import io.latchkey.Primitive;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * What this client knows of one grant: the holder and the fencing token the backend gave it, the
 * holds this client took on it per mode, whether the watchdog renews it, until when it is known to
 * be valid, whether the backend has it in doubt (suspended) and whether it was lost.
 *
 * <p>The counts are this client's own holds, not the backend's total for the owner: a token owner
 * may also hold grants made by another process, and this client must neither release those on close
 * nor keep them alive with its watchdog once its own holds are released.
 *
 * <p>A lost grant stays registered until every local hold on it has been released, so that each of
 * those releases can report the loss instead of "not held".
 */
final class Hold {
  final HolderRef ref;
  private final GrantRef grant;
  private int sharedHolds;
  private int exclusiveHolds;
  // What the holds of each mode were taken as, for observers (a name is one record for every
  // kind of lock, so the last grant in a mode names it).
  private Primitive sharedPrimitive = Primitive.READ_LOCK;
  private Primitive exclusivePrimitive = Primitive.LOCK;
  private int releasesInFlight;
  private boolean renewing;
  private boolean watchdog;
  private long leaseNanos;
  private long validUntilNanos;
  private boolean suspended;
  private volatile @Nullable LeaseLostException lost;
  private @Nullable ScheduledFuture<?> leaseTimer;
  // Made on the first registration: most grants never get one.
  private @Nullable List<LeaseListener> listeners;
  private @Nullable List<Runnable> revocationHandlers;
  private boolean revocationRequested;

  Hold(HolderRef ref, long fencingToken) {
    this.ref = ref;
    this.grant = new GrantRef(ref, fencingToken);
  }

  GrantRef grant() {
    return grant;
  }

  long fencingToken() {
    return grant.fencingToken();
  }

  /**
   * Adds one hold, valid until {@code sentAt} plus the lease, or plus {@code validForNanos} if the
   * backend guarantees less (negative: no such bound), less the drift allowance.
   */
  synchronized void granted(
      LockMode mode,
      Primitive primitive,
      boolean renewed,
      long sentAt,
      long lease,
      long validForNanos) {
    if (mode == LockMode.SHARED) {
      sharedHolds++;
      sharedPrimitive = primitive;
    } else {
      exclusiveHolds++;
      exclusivePrimitive = primitive;
    }
    if (renewed) {
      watchdog = true;
      leaseNanos = lease;
    }
    extendValidity(sentAt, lease, validForNanos);
  }

  /**
   * @return what the holds in that mode were taken as
   */
  synchronized Primitive primitive(LockMode mode) {
    return mode == LockMode.SHARED ? sharedPrimitive : exclusivePrimitive;
  }

  /**
   * @return what this grant's holds were taken as: the exclusive kind if it has exclusive holds
   */
  synchronized Primitive primitive() {
    return exclusiveHolds > 0 || sharedHolds == 0 ? exclusivePrimitive : sharedPrimitive;
  }

  /**
   * The backend set the grant's lease to {@code lease} from a call sent at {@code sentAt}: the
   * watchdog no longer renews it, its validity is that lease (shorter or longer than before), and
   * the lease timer is cancelled so that the caller re-arms it at the new end.
   */
  synchronized void leaseUpdated(long sentAt, long lease) {
    watchdog = false;
    leaseNanos = lease;
    validUntilNanos = validUntil(sentAt, lease, -1);
    if (leaseTimer != null) {
      leaseTimer.cancel(false);
      leaseTimer = null;
    }
  }

  /** Forgets one hold (released, or reported lost); returns the holds left in all modes. */
  synchronized int dropOne(LockMode mode) {
    if (mode == LockMode.SHARED) {
      sharedHolds = Math.max(0, sharedHolds - 1);
    } else {
      exclusiveHolds = Math.max(0, exclusiveHolds - 1);
    }
    int left = sharedHolds + exclusiveHolds;
    if (left == 0 && leaseTimer != null) {
      leaseTimer.cancel(false);
      leaseTimer = null;
    }
    return left;
  }

  /** A release of one hold is on its way to the backend. */
  synchronized void releaseSent() {
    releasesInFlight++;
  }

  /** The backend answered a release (or it failed). */
  synchronized void releaseAnswered() {
    releasesInFlight--;
  }

  /**
   * True while a release is on its way: a renewal that finds the record gone then may have raced
   * with it, and the release's own answer says whether the grant was lost.
   */
  synchronized boolean releasing() {
    return releasesInFlight > 0;
  }

  /** Returns false if a renewal of this grant is on its way already (a slow shard). */
  synchronized boolean startRenewal() {
    if (renewing) {
      return false;
    }
    renewing = true;
    return true;
  }

  synchronized void renewalAnswered() {
    renewing = false;
  }

  synchronized boolean renewing() {
    return renewing;
  }

  /** True when no lease timer is pending: its deadline passed, or nothing is held. */
  synchronized boolean leaseTimerIdle() {
    return leaseTimer == null;
  }

  /** Starts the lease timer unless one is pending. */
  synchronized void watchLease(Supplier<@Nullable ScheduledFuture<?>> schedule) {
    if (leaseTimer == null && sharedHolds + exclusiveHolds > 0) {
      leaseTimer = schedule.get();
    }
  }

  /** The lease timer fired. */
  synchronized void leaseTimerFired() {
    leaseTimer = null;
  }

  /** A renewal sent at {@code sentAt} was confirmed. */
  synchronized void renewed(long sentAt, long validForNanos) {
    extendValidity(sentAt, leaseNanos, validForNanos);
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

  /** The validity of a grant or renewal sent at {@code sentAt}, by this client's clock. */
  static long validUntil(long sentAt, long leaseNanos, long validForNanos) {
    long bound = validForNanos >= 0 ? Math.min(leaseNanos, validForNanos) : leaseNanos;
    return sentAt + bound - driftAllowance(bound);
  }

  private void extendValidity(long sentAt, long lease, long validForNanos) {
    long until = validUntil(sentAt, lease, validForNanos);
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

  synchronized boolean renewedByWatchdog() {
    return watchdog;
  }

  synchronized long validUntilNanos() {
    return validUntilNanos;
  }

  synchronized boolean suspended() {
    return suspended;
  }

  /** Marks the grant in doubt; returns the listeners to tell, none if it was in doubt already. */
  synchronized List<LeaseListener> suspend() {
    if (suspended || lost != null) {
      return List.of();
    }
    suspended = true;
    return listeners == null ? List.of() : List.copyOf(listeners);
  }

  /**
   * The backend confirmed the grant; returns the listeners to tell, none if it was not suspended.
   */
  synchronized List<LeaseListener> resume() {
    if (!suspended || lost != null) {
      return List.of();
    }
    suspended = false;
    return listeners == null ? List.of() : List.copyOf(listeners);
  }

  @Nullable LeaseLostException lost() {
    return lost;
  }

  /**
   * Marks the lease lost; returns the listeners to notify, or an empty list if it was lost already.
   */
  synchronized List<LeaseListener> markLost(LeaseLostException reason) {
    if (lost != null) {
      return List.of();
    }
    lost = reason;
    List<LeaseListener> toNotify = listeners == null ? List.of() : List.copyOf(listeners);
    listeners = null;
    return toNotify;
  }

  /** Registers a listener; returns false (not registered) if the hold is already lost. */
  synchronized boolean addListener(LeaseListener listener) {
    if (lost != null) {
      return false;
    }
    if (listeners == null) {
      listeners = new ArrayList<>(1);
    }
    listeners.add(listener);
    return true;
  }

  /**
   * Registers a revocation handler; returns true if a request reached this grant already, so that
   * the caller runs the handler at once.
   */
  synchronized boolean addRevocationHandler(Runnable handler) {
    if (revocationHandlers == null) {
      revocationHandlers = new ArrayList<>(1);
    }
    revocationHandlers.add(handler);
    return revocationRequested;
  }

  /** A revocation request reached this grant; returns the handlers to run. */
  synchronized List<Runnable> revocationRequested() {
    revocationRequested = true;
    return revocationHandlers == null ? List.of() : List.copyOf(revocationHandlers);
  }

  synchronized boolean isRevocationRequested() {
    return revocationRequested;
  }
}
