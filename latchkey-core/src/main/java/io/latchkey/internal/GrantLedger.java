package io.latchkey.internal;

import io.latchkey.LeaseListener;
import io.latchkey.LeaseLostException;
import io.latchkey.LockMode;
import io.latchkey.Primitive;
import io.latchkey.Ticker;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.GrantEvents;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HandOverResult;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.ResourceType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The grants of one client and everything that happens to them after the backend granted: holds
 * counted per grant, releases, the lease timer of each grant, loss and its listeners, suspension
 * and resumption reported by the backend, and the undoing of grants that nobody will use.
 *
 * <p>Identity. A grant is its holder (type, name, owner or permit id) and the fencing token the
 * backend gave it. Renewals and releases name both, so a record that the backend re-granted to the
 * same owner after this grant was lost is never renewed or released by it. A grant answer whose
 * token differs from the registered grant of that holder means the backend forgot the registered
 * one: it is reported lost and the answer becomes a new grant.
 *
 * <p>Validity. A grant is valid until its lease (or the backend's shorter guarantee), counted from
 * when the attempt or last confirmed renewal was <em>sent</em>, less a drift allowance. Every
 * grant, renewed by the watchdog or not, has one timer at that moment: if the validity was not
 * extended by then, the grant is lost then, not at the next renewal.
 *
 * <p>Threads. Transitions of the registry happen inside the map's atomic compute. Lease-loss
 * listeners run on the user's callback executor, never on the scheduler thread that runs the timers
 * and renewals, nor on the client library's thread that delivered an event.
 */
final class GrantLedger {
  private static final Logger LOG = LoggerFactory.getLogger(GrantLedger.class);

  private final ConcurrentMap<HolderRef, Hold> holds = new ConcurrentHashMap<>();
  private final LatchkeyBackend backend;
  private final BackendCalls calls;
  private final ScheduledExecutorService scheduler;
  private final Executor callbacks;
  private final Ticker ticker;
  private final BackendEvents events = new BackendEvents();
  private final Observing observing;
  private final @Nullable WaitChannels handOvers;

  private final long renewIntervalNanos;

  /**
   * @param renewInterval how often the watchdog renews (see {@link #watchNewGrant})
   * @param handOvers this client's waiters, whom a lock release hands the lock over to (see {@link
   *     io.latchkey.spi.LockStore#releaseAndHandOver}), or null if the backend does not hand over
   */
  GrantLedger(
      LatchkeyBackend backend,
      BackendCalls calls,
      ScheduledExecutorService scheduler,
      Executor callbacks,
      Ticker ticker,
      Duration renewInterval,
      Observing observing,
      @Nullable WaitChannels handOvers) {
    this.handOvers = handOvers;
    this.renewIntervalNanos = renewInterval.toNanos();
    this.observing = observing;
    this.backend = backend;
    this.calls = calls;
    this.scheduler = scheduler;
    this.callbacks = callbacks;
    this.ticker = ticker;
  }

  /** The sink a backend reports its events to; bound to the ledger once the backend is open. */
  static final class BackendEvents implements GrantEvents {
    private volatile @Nullable GrantLedger ledger;

    void bind(GrantLedger target) {
      this.ledger = target;
    }

    @Override
    public void lost(GrantRef grant, String reason) {
      GrantLedger target = ledger;
      if (target != null) {
        target.onBackendLost(grant, reason);
      }
    }

    @Override
    public void suspended(GrantRef grant, String reason) {
      GrantLedger target = ledger;
      if (target != null) {
        target.onBackendSuspended(grant, reason);
      }
    }

    @Override
    public void resumed(GrantRef grant) {
      GrantLedger target = ledger;
      if (target != null) {
        target.confirm(List.of(grant));
      }
    }

    @Override
    public void allLost(String reason) {
      GrantLedger target = ledger;
      if (target != null) {
        target.all().forEach(hold -> target.onBackendLost(hold.grant(), reason));
      }
    }

    @Override
    public void allSuspended(String reason) {
      GrantLedger target = ledger;
      if (target != null) {
        target.all().forEach(hold -> target.onBackendSuspended(hold.grant(), reason));
      }
    }

    @Override
    public void allResumed() {
      GrantLedger target = ledger;
      if (target != null) {
        List<GrantRef> suspended = new ArrayList<>();
        for (Hold hold : target.all()) {
          if (hold.suspended()) {
            suspended.add(hold.grant());
          }
        }
        target.confirm(suspended);
      }
    }
  }

  /** The events sink to hand the backend; forwards to this ledger. */
  BackendEvents events() {
    return events;
  }

  // ---- registering grants ----

  /**
   * Records a grant, or returns null if it came too late to be used (its validity had passed when
   * the answer arrived), in which case it was undone on the backend.
   *
   * @param sentAt when the attempt was sent, by the ticker
   * @param leaseNanos the lease asked for
   * @param validForNanos the backend's shorter guarantee, or negative
   */
  @Nullable Hold granted(
      Primitive primitive,
      HolderRef ref,
      LockMode mode,
      long token,
      boolean watchdog,
      long sentAt,
      long leaseNanos,
      long validForNanos) {
    if (Hold.validUntil(sentAt, leaseNanos, validForNanos) - ticker.nanoTime() <= 0) {
      undo(new GrantRef(ref, token), mode, "its answer came after its lease had run out");
      return null;
    }
    Hold fresh = new Hold(ref, token);
    fresh.granted(mode, primitive, watchdog, sentAt, leaseNanos, validForNanos);
    Hold hold = fresh;
    Hold old = null;
    if (holds.putIfAbsent(ref, fresh) != null) {
      // A re-entry into the grant this client knows, or a grant that replaces it.
      Hold[] superseded = new Hold[1];
      hold =
          holds.compute(
              ref,
              (key, current) -> {
                if (current == null || current.fencingToken() != token) {
                  superseded[0] = current;
                  return fresh;
                }
                current.granted(mode, primitive, watchdog, sentAt, leaseNanos, validForNanos);
                return current;
              });
      old = superseded[0];
    }
    observing.holdsChanged(primitive, 1);
    if (handOvers != null && mode == LockMode.EXCLUSIVE && ref.type() == ResourceType.LOCK) {
      handOvers.exclusiveGranted(hold);
    }
    if (old != null && old.lost() == null) {
      markLost(
          old,
          new LeaseLostException(
              describe(old)
                  + " was lost: the backend had forgotten it when the same owner acquired again",
              null));
    }
    watchNewGrant(hold);
    return hold;
  }

  /**
   * Undoes one hold of a grant that nobody will use (it came late, or after its caller gave up):
   * one release by owner and fencing token, never retried. If it fails, the grant runs out with its
   * lease.
   */
  @SuppressWarnings("FutureReturnValueIgnored") // the handler deals with every outcome itself
  void undo(GrantRef grant, LockMode mode, String why) {
    LOG.debug("undoing {} of {}: {}", mode, grant.name(), why);
    releaseOnBackend(grant, mode)
        .whenComplete(
            (left, failure) -> {
              if (failure != null) {
                LOG.warn(
                    "could not undo a grant of {} '{}' ({}); it runs out with its lease: {}",
                    LatchkeyClient.lowerCase(grant.type()),
                    grant.name(),
                    why,
                    failure.toString());
              }
            });
  }

  // ---- releasing ----

  /**
   * Releases one hold of a grant. A lost grant is released on the backend too, by its token (which
   * only ever matches that grant, so no newer grant of the same owner is touched), and the release
   * then fails with the loss.
   */
  CompletableFuture<Void> release(Hold hold, LockMode mode) {
    if (hold.holds(mode) == 0) {
      // Every hold of this grant was released already, e.g. a permit released by its id.
      return CompletableFuture.failedFuture(
          new IllegalStateException(describe(hold) + " was already released"));
    }
    if (hold.lost() == null
        && !hold.renewing()
        && hold.validUntilNanos() - ticker.nanoTime() <= 0) {
      // Its validity ran out and the lease timer has not run yet: the grant is lost now, as the
      // timer would find, so the release reports the loss even if the backend, whose lease ends a
      // little later (the drift allowance), still has it.
      lapse(hold);
    }
    hold.releaseSent();
    if (hold.ref.type() == ResourceType.LOCK) {
      WaitChannels.HandOver next =
          handOvers != null && hold.holds(mode) == 1
              ? handOvers.claimNext(hold.ref.name(), hold.ref.holderId())
              : null;
      if (next != null) {
        HandingRelease release = new HandingRelease(hold, mode, next);
        return calls.call(release).handle(release);
      }
      HoldRelease release = new HoldRelease(hold, mode);
      return calls.call(release).handle(release);
    }
    return releaseOnBackend(hold.grant(), mode)
        .handle((remaining, failure) -> released(hold, mode, remaining, failure));
  }

  /**
   * The release of one hold of a lock, as one object: the backend call and the handler of its
   * answer (a lock release is on every cycle's path, where a lambda per part is garbage).
   */
  private final class HoldRelease
      implements BackendCalls.Call<ReleaseResult>,
          BiFunction<@Nullable ReleaseResult, @Nullable Throwable, @Nullable Void> {
    private final Hold hold;
    private final LockMode mode;

    HoldRelease(Hold hold, LockMode mode) {
      this.hold = hold;
      this.mode = mode;
    }

    @Override
    public String what() {
      return "release lock '" + hold.ref.name() + "'";
    }

    @Override
    public CompletionStage<ReleaseResult> send() {
      return backend.locks().release(hold.grant(), mode);
    }

    @Override
    public @Nullable Void apply(@Nullable ReleaseResult result, @Nullable Throwable failure) {
      Integer remaining = result == null ? null : result.wasHeld() ? result.remainingHolds() : -1;
      return released(hold, mode, remaining, failure);
    }
  }

  /**
   * The release of a lock's last hold in a mode that carries an attempt for a waiter of this client
   * ({@link io.latchkey.spi.LockStore#releaseAndHandOver}): on a contended lock, the next holder is
   * granted in the releasing call, without a wake-up and a second round trip.
   */
  private final class HandingRelease
      implements BackendCalls.Call<HandOverResult>,
          BiFunction<@Nullable HandOverResult, @Nullable Throwable, @Nullable Void> {
    private final Hold hold;
    private final LockMode mode;
    private final WaitChannels.HandOver next;
    private volatile long sentAt;

    HandingRelease(Hold hold, LockMode mode, WaitChannels.HandOver next) {
      this.hold = hold;
      this.mode = mode;
      this.next = next;
    }

    @Override
    public String what() {
      return "release lock '" + hold.ref.name() + "'";
    }

    @Override
    public CompletionStage<HandOverResult> send() {
      sentAt = ticker.nanoTime();
      return backend.locks().releaseAndHandOver(hold.grant(), mode, next.request());
    }

    @Override
    public void lateAnswer(HandOverResult late) {
      AcquireResult attempt = late.next();
      if (attempt != null && attempt.isGranted()) {
        // The waiter was told nothing was handed over and tries by itself; this grant is nobody's.
        LockRequest request = next.request();
        undo(
            new GrantRef(
                new HolderRef(ResourceType.LOCK, request.name(), request.owner()),
                attempt.fencingToken()),
            request.mode(),
            "the answer to the release that handed it over came after the call timed out");
      }
    }

    @Override
    public @Nullable Void apply(@Nullable HandOverResult result, @Nullable Throwable failure) {
      // The waiter first: its thread can go on while this one finishes the release.
      next.acquisition().handedOver(result == null ? null : result.next(), sentAt);
      ReleaseResult released = result == null ? null : result.released();
      Integer remaining =
          released == null ? null : released.wasHeld() ? released.remainingHolds() : -1;
      return released(hold, mode, remaining, failure);
    }
  }

  /** What the backend's answer to the release of one hold means for it. */
  private @Nullable Void released(
      Hold hold, LockMode mode, @Nullable Integer remaining, @Nullable Throwable failure) {
    // Dropped before the release counts as answered: a renewal that raced with it and finds the
    // grant gone must see it either still releasing or no longer held.
    dropOne(hold, mode);
    hold.releaseAnswered();
    LeaseLostException lost = hold.lost();
    if (lost != null) {
      throw lost;
    }
    if (failure != null || remaining == null) {
      // The backend could not be told. The grant is forgotten here so that the watchdog stops
      // renewing it: its lease then runs out on the backend by itself.
      throw LatchkeyClient.asRuntime(
          failure != null ? failure : new IllegalStateException("no answer to a release"));
    }
    if (remaining < 0) {
      LeaseLostException gone =
          new LeaseLostException(
              describe(hold)
                  + " was lost before it was released: the backend no longer knew it"
                  + " (its lease expired, or it was force-released)",
              null);
      markLost(hold, gone);
      throw gone;
    }
    return null;
  }

  /**
   * Releases several permits in one backend call that answers whether it released all of them (it
   * releases all or none). The local holds among them count as being released while the call is on
   * its way (a renewal that finds them gone meanwhile does not report a loss), and are forgotten if
   * it released them or failed without an answer (their leases then run out on the backend).
   */
  CompletableFuture<Boolean> releaseTogether(
      List<Hold> local, Supplier<CompletableFuture<Boolean>> release) {
    local.forEach(Hold::releaseSent);
    return release
        .get()
        .handle(
            (released, failure) -> {
              for (Hold hold : local) {
                if (failure != null || released) {
                  while (hold.holds(LockMode.EXCLUSIVE) > 0) {
                    dropOne(hold, LockMode.EXCLUSIVE);
                  }
                }
                hold.releaseAnswered();
              }
              if (failure != null) {
                throw LatchkeyClient.asRuntime(failure);
              }
              return released;
            });
  }

  /** The backend gave a grant a new lease (see {@link Hold#leaseUpdated}). */
  void leaseUpdated(Hold hold, long sentAt, long leaseNanos) {
    hold.leaseUpdated(sentAt, leaseNanos);
    watchLease(hold);
  }

  /** Returns the holds left in that mode, or -1 if the backend did not have the grant. */
  private CompletableFuture<Integer> releaseOnBackend(GrantRef grant, LockMode mode) {
    if (grant.type() == ResourceType.LEASED_SEMAPHORE) {
      return calls
          .call(
              () -> "release a permit of semaphore '" + grant.name() + "'",
              () -> backend.leasedSemaphores().release(grant.name(), grant.holderId()))
          .thenApply(wasHeld -> wasHeld ? 0 : -1);
    }
    return calls
        .call(
            () -> "release lock '" + grant.name() + "'", () -> backend.locks().release(grant, mode))
        .thenApply(result -> result.wasHeld() ? result.remainingHolds() : -1);
  }

  /** Releases every local hold of a grant (on close). */
  CompletableFuture<Void> releaseEverything(Hold hold) {
    List<CompletableFuture<Void>> all = new ArrayList<>();
    for (LockMode mode : LockMode.values()) {
      int count = hold.holds(mode);
      CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
      for (int i = 0; i < count; i++) {
        chain = chain.thenCompose(ignored -> release(hold, mode));
      }
      all.add(chain);
    }
    return CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0]));
  }

  private void dropOne(Hold hold, LockMode mode) {
    Primitive[] dropped = new Primitive[1];
    holds.computeIfPresent(
        hold.ref,
        (key, current) -> {
          if (hold.holds(mode) > 0) {
            dropped[0] = hold.primitive(mode);
          }
          if (current != hold) {
            hold.dropOne(mode);
            return current;
          }
          return hold.dropOne(mode) == 0 ? null : hold;
        });
    if (dropped[0] != null) {
      observing.holdsChanged(dropped[0], -1);
    }
    if (handOvers != null
        && mode == LockMode.EXCLUSIVE
        && hold.ref.type() == ResourceType.LOCK
        && hold.holds(LockMode.EXCLUSIVE) == 0) {
      handOvers.exclusiveEnded(hold);
    }
  }

  // ---- lookups ----

  @Nullable Hold find(HolderRef ref) {
    return holds.get(ref);
  }

  private @Nullable Hold find(GrantRef grant) {
    Hold hold = holds.get(grant.holder());
    return hold != null && hold.fencingToken() == grant.fencingToken() ? hold : null;
  }

  /** The grants the watchdog must renew: held, not lost, taken without an explicit lease. */
  List<Hold> renewable() {
    List<Hold> result = new ArrayList<>();
    for (Hold hold : holds.values()) {
      if (hold.lost() == null && hold.renewedByWatchdog() && hold.totalHolds() > 0) {
        result.add(hold);
      }
    }
    return result;
  }

  List<Hold> all() {
    return new ArrayList<>(holds.values());
  }

  // ---- validity and loss ----

  boolean isValid(Hold hold) {
    return hold.lost() == null
        && !hold.suspended()
        && hold.totalHolds() > 0
        && hold.validUntilNanos() - ticker.nanoTime() > 0;
  }

  Duration remaining(Hold hold) {
    return Duration.ofNanos(Math.max(0, hold.validUntilNanos() - ticker.nanoTime()));
  }

  /**
   * Arms a new grant's lease timer, unless the watchdog renews the grant and its next pass comes
   * well before the validity ends: that pass arms it ({@link #renewalStarting}). Most watchdog
   * grants are released before the first pass and never need a timer.
   */
  private void watchNewGrant(Hold hold) {
    if (hold.renewedByWatchdog()
        && hold.validUntilNanos() - ticker.nanoTime() > 2 * renewIntervalNanos) {
      return;
    }
    watchLease(hold);
  }

  /** The watchdog is about to renew a grant: from now on its lease timer runs. */
  void renewalStarting(Hold hold) {
    watchLease(hold);
  }

  /** One timer per grant at the end of its validity; an extended validity re-arms it. */
  private void watchLease(Hold hold) {
    hold.watchLease(
        () -> {
          long delay = hold.validUntilNanos() - ticker.nanoTime();
          try {
            return scheduler.schedule(
                () -> checkLease(hold), Math.max(0, delay), TimeUnit.NANOSECONDS);
          } catch (RejectedExecutionException closed) {
            return null; // the client is closing: nothing is watched any more
          }
        });
  }

  private void checkLease(Hold hold) {
    hold.leaseTimerFired();
    if (hold.lost() != null || hold.totalHolds() == 0) {
      return;
    }
    if (hold.validUntilNanos() - ticker.nanoTime() > 0) {
      watchLease(hold);
      return;
    }
    if (hold.renewing()) {
      // A renewal is on its way: if the backend confirms it, the grant never lapsed there (a
      // renewal finds a lapsed grant gone). Until it answers the grant is in doubt, not lost.
      suspend(hold, "no renewal was confirmed before its lease ran out; one is on its way");
      return;
    }
    lapse(hold);
  }

  /** The grant's validity ran out with no renewal on its way: it is lost. */
  private void lapse(Hold hold) {
    if (hold.renewedByWatchdog()) {
      loseUnconfirmed(hold);
    } else {
      markLost(
          hold, new LeaseLostException(describe(hold) + " was lost: its lease time ran out", null));
    }
  }

  /**
   * A watchdog grant whose renewals were not confirmed before its lease ran out is lost. A renewal
   * of it that was sent may still be applied (it was on its way when the backend stalled, or only
   * its answer was lost), which would keep the record alive for one more lease after the
   * application was told: so the grant is also released on the backend, every hold of it, by owner
   * and fencing token (which no other grant has). Backends send commands of one connection in
   * order, so this release comes after any renewal that was sent before it.
   */
  private void loseUnconfirmed(Hold hold) {
    LeaseLostException lost =
        new LeaseLostException(
            describe(hold) + " was lost: no renewal was confirmed before its lease ran out", null);
    markLost(hold, lost);
    if (hold.lost() != lost) {
      return; // lost before, for another reason: whoever lost it decided
    }
    for (LockMode mode : LockMode.values()) {
      for (int i = hold.holds(mode); i > 0; i--) {
        undo(hold.grant(), mode, "its renewals were not confirmed in time");
      }
    }
  }

  /** A renewal confirmed this grant: its validity and timer move on. */
  void renewed(Hold hold, long sentAt, long validForNanos) {
    hold.renewed(sentAt, validForNanos);
  }

  /**
   * A renewal of this grant was answered (confirmed, gone, or failed). A grant in doubt since its
   * deadline is valid again if the answer extended its validity past now, else lost.
   */
  void renewalSettled(Hold hold) {
    if (hold.lost() != null || hold.totalHolds() == 0) {
      return;
    }
    if (hold.validUntilNanos() - ticker.nanoTime() > 0) {
      hold.resume().forEach(listener -> notify(listener::resumed));
      watchLease(hold);
    } else if (hold.leaseTimerIdle()) {
      loseUnconfirmed(hold);
    }
  }

  /**
   * The backend no longer has a grant that a renewal asked for. If a release of it is on its way,
   * the renewal may have raced with it: the release's answer decides.
   */
  void goneAtRenewal(Hold hold) {
    if (hold.releasing() || hold.totalHolds() == 0) {
      return;
    }
    markLost(
        hold,
        new LeaseLostException(
            describe(hold)
                + " was lost: the backend no longer knows it (its lease expired, or it was"
                + " force-released)",
            null));
  }

  private void onBackendLost(GrantRef grant, String reason) {
    Hold hold = find(grant);
    // A release on its way decides by its own answer (a normal release is never a loss).
    if (hold != null && hold.totalHolds() > 0 && !hold.releasing()) {
      markLost(hold, new LeaseLostException(describe(hold) + " was lost: " + reason, null));
    }
  }

  private void onBackendSuspended(GrantRef grant, String reason) {
    Hold hold = find(grant);
    if (hold != null) {
      suspend(hold, reason);
    }
  }

  private void suspend(Hold hold, String reason) {
    List<LeaseListener> listeners = hold.suspend();
    if (hold.suspended()) {
      LOG.info(
          "{} is in doubt ({}): not valid until the backend confirms it", describe(hold), reason);
    }
    listeners.forEach(listener -> notify(() -> listener.suspended(reason)));
  }

  /**
   * Asks the backend whether these grants are still held, by a renewal with a lease of 1 ms (which
   * never shortens a lease): a confirmed grant is valid again, a gone one is lost, one that could
   * not be checked stays suspended until its lease timer decides.
   */
  @SuppressWarnings("FutureReturnValueIgnored") // the handler deals with every outcome itself
  void confirm(List<GrantRef> grants) {
    if (grants.isEmpty()) {
      return;
    }
    calls
        .call(() -> "confirm " + grants.size() + " grants", () -> backend.renew(grants, 1))
        .whenComplete(
            (answer, failure) -> {
              if (failure != null) {
                LOG.warn("could not confirm grants after a resumption: {}", failure.toString());
                return;
              }
              for (GrantRef grant : grants) {
                Hold hold = find(grant);
                if (hold == null) {
                  continue;
                }
                if (answer.gone().contains(grant)) {
                  goneAtRenewal(hold);
                } else if (!answer.failed().containsKey(grant)) {
                  hold.resume().forEach(listener -> notify(listener::resumed));
                }
              }
            });
  }

  void markLost(Hold hold, LeaseLostException reason) {
    List<LeaseListener> listeners = hold.markLost(reason);
    if (handOvers != null && hold.ref.type() == ResourceType.LOCK) {
      handOvers.exclusiveEnded(hold); // waiters behind it locally try by themselves
    }
    if (hold.lost() == reason) {
      LOG.warn("{}", reason.getMessage());
      observing.leaseLost(hold.primitive());
    }
    listeners.forEach(listener -> notify(() -> listener.lost(reason)));
  }

  void addListener(Hold hold, LeaseListener listener) {
    if (!hold.addListener(listener)) {
      LeaseLostException lost = hold.lost();
      if (lost != null) {
        notify(() -> listener.lost(lost));
      }
    }
  }

  // ---- cooperative revocation ----

  /**
   * A revocation request for a grant of this client arrived: its handlers run on the callback
   * executor. A grant this client no longer holds (released, lost, or re-granted with another token
   * since the request was sent) ignores it.
   */
  void revocationRequested(GrantRef grant) {
    Hold hold = find(grant);
    if (hold == null || hold.totalHolds() == 0 || hold.lost() != null) {
      LOG.debug("ignoring a revocation request for a grant of '{}' not held here", grant.name());
      return;
    }
    LOG.info("{} was asked to give up its lock", describe(hold));
    hold.revocationRequested().forEach(this::notify);
  }

  /** Registers a revocation handler; runs it at once if a request reached the grant already. */
  void onRevocationRequested(Hold hold, Runnable handler) {
    if (hold.addRevocationHandler(handler)) {
      notify(handler);
    }
  }

  /** Runs a user listener on the callback executor; a listener that throws is logged. */
  private void notify(Runnable call) {
    try {
      callbacks.execute(
          () -> {
            try {
              call.run();
            } catch (RuntimeException e) {
              LOG.error("lease listener failed", e);
            }
          });
    } catch (RejectedExecutionException closing) {
      LOG.warn("the callback executor refused a lease listener");
    }
  }

  String describe(Hold hold) {
    HolderRef ref = hold.ref;
    return switch (ref.type()) {
      case LEASED_SEMAPHORE -> "permit " + ref.holderId() + " of semaphore '" + ref.name() + "'";
      default ->
          "lock '"
              + ref.name()
              + "' of owner "
              + ref.holderId().substring(0, Math.min(ref.holderId().length(), 12))
              + "… (fencing token "
              + hold.fencingToken()
              + ")";
    };
  }
}
