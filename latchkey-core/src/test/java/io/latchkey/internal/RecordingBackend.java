package io.latchkey.internal;

import io.latchkey.Feature;
import io.latchkey.LockMode;
import io.latchkey.Ticker;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.AdminStore;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.BackendFactory;
import io.latchkey.spi.GrantEvents;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HandOverResult;
import io.latchkey.spi.LatchStore;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.RenewResult;
import io.latchkey.spi.SemaphoreStore;
import io.latchkey.spi.WakeupBus;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Test support for the engine tests on a manual clock: a backend (the memory backend underneath)
 * that records the lock calls and renewals the engine makes, with the clock reading of each, and
 * can misbehave on demand: renewals that are lost on the way (never applied, never answered) or
 * whose answers are lost (applied, never answered), renewals that are late on the way (held here,
 * applied and answered when the test delivers them) and acquire answers that are late on the way
 * back (applied on the server, held here until the test delivers them). Hidden features are left
 * out of {@link LatchkeyBackend#features()}; hiding {@link Feature#WAKEUP_PUSH} also hides the
 * wake-up bus.
 */
final class RecordingBackend implements BackendFactory {
  /** One renewal call: the grants it named and the lease it asked for. */
  record Renewal(long at, List<GrantRef> grants, long leaseMillis) {}

  private final BackendFactory memory;
  private final Ticker ticker;
  private final Set<Feature> hidden;
  private final List<Long> acquireTimes = new CopyOnWriteArrayList<>();
  private final List<Renewal> renewals = new CopyOnWriteArrayList<>();
  private final List<GrantRef> releases = new CopyOnWriteArrayList<>();
  private final List<Runnable> heldAnswers = new ArrayList<>();
  private final List<Runnable> heldRenewals = new ArrayList<>();
  private volatile boolean dropRenewals;
  private volatile boolean holdRenewals;
  private volatile boolean loseRenewalAnswers;
  private volatile long validityCap = -1;
  private volatile @Nullable Throwable releaseFailure;
  private volatile boolean holdAcquireAnswers;
  private volatile boolean holdHandOvers;
  private final List<Runnable> heldHandOvers = new ArrayList<>();
  private final List<LockRequest> handOvers = new CopyOnWriteArrayList<>();
  private volatile @Nullable BackendContext context;

  RecordingBackend(BackendFactory memory, Ticker ticker, Set<Feature> hidden) {
    this.memory = memory;
    this.ticker = ticker;
    this.hidden = hidden.isEmpty() ? EnumSet.noneOf(Feature.class) : EnumSet.copyOf(hidden);
  }

  RecordingBackend(BackendFactory memory, Ticker ticker) {
    this(memory, ticker, Set.of());
  }

  @Override
  public LatchkeyBackend open(BackendContext opened) {
    this.context = opened;
    return new Connection(memory.open(opened));
  }

  /** The event sink the engine handed the backend, for tests that play the backend's part. */
  GrantEvents events() {
    BackendContext opened = context;
    if (opened == null) {
      throw new IllegalStateException("no client opened this backend yet");
    }
    return opened.events();
  }

  /** From now on, renewals are lost on the way: never applied on the server, never answered. */
  void dropRenewals(boolean drop) {
    this.dropRenewals = drop;
  }

  /**
   * From now on, renewals are held on the way: neither applied on the server nor answered until
   * {@link #deliverRenewals()}.
   */
  void holdRenewals(boolean hold) {
    this.holdRenewals = hold;
  }

  /** From now on, renewals are applied on the server but their answers are lost on the way. */
  void loseRenewalAnswers(boolean lose) {
    this.loseRenewalAnswers = lose;
  }

  /** Applies every held renewal on the server now, in order, and answers it, on this thread. */
  void deliverRenewals() {
    deliver(heldRenewals);
  }

  /**
   * From now on, grants and renewals say the backend guarantees them for only {@code millis} (as a
   * ZooKeeper session timeout would); negative: no such bound.
   */
  void capValidity(long millis) {
    validityCap = millis;
  }

  /** Releases fail as a reset connection would, without reaching the server. */
  void failReleases(boolean fail) {
    failReleasesWith(
        fail
            ? new java.io.UncheckedIOException(new java.io.IOException("connection reset"))
            : null);
  }

  /** Releases fail with {@code failure} without reaching the server; null: they work again. */
  void failReleasesWith(@Nullable Throwable failure) {
    releaseFailure = failure;
  }

  /** From now on, lock acquires are applied on the server but their answers are held back. */
  void holdAcquireAnswers(boolean hold) {
    this.holdAcquireAnswers = hold;
  }

  /** Delivers every held acquire answer, in order, on the calling thread. */
  void deliverAcquireAnswers() {
    deliver(heldAnswers);
  }

  private static void deliver(List<Runnable> held) {
    List<Runnable> toDeliver;
    synchronized (held) {
      toDeliver = new ArrayList<>(held);
      held.clear();
    }
    toDeliver.forEach(Runnable::run);
  }

  /**
   * An answer that completes only when the test delivers it: {@code call} runs then (it may return
   * a stage that was started earlier).
   */
  private static <T> CompletionStage<T> heldBack(
      List<Runnable> held, Supplier<CompletionStage<T>> call) {
    CompletableFuture<T> answer = new CompletableFuture<>();
    synchronized (held) {
      held.add(
          () ->
              call.get()
                  .whenComplete(
                      (result, failure) -> {
                        if (failure != null) {
                          answer.completeExceptionally(failure);
                        } else {
                          answer.complete(result);
                        }
                      }));
    }
    return answer;
  }

  /**
   * From now on, releases that hand a lock over reach the server only when the test delivers them
   * ({@link #deliverHandOvers}), and are answered then.
   */
  void holdHandOvers(boolean hold) {
    this.holdHandOvers = hold;
  }

  /** Applies every held hand-over on the server now, in order, and answers it, on this thread. */
  void deliverHandOvers() {
    deliver(heldHandOvers);
  }

  /** The waiters' attempts carried by releases that hand a lock over, in order. */
  List<LockRequest> handOvers() {
    return List.copyOf(handOvers);
  }

  /** The clock readings at which lock acquires reached the backend. */
  List<Long> acquireTimes() {
    return List.copyOf(acquireTimes);
  }

  List<Renewal> renewals() {
    return List.copyOf(renewals);
  }

  /** The grants named by lock releases, in order. */
  List<GrantRef> releases() {
    return List.copyOf(releases);
  }

  private final class Connection implements LatchkeyBackend, LockStore {
    private final LatchkeyBackend inner;

    Connection(LatchkeyBackend inner) {
      this.inner = inner;
    }

    @Override
    public String description() {
      return "recording-" + inner.description();
    }

    @Override
    public Set<Feature> features() {
      Set<Feature> features = EnumSet.copyOf(inner.features());
      features.removeAll(hidden);
      return features;
    }

    @Override
    public LockStore locks() {
      return this;
    }

    @Override
    public SemaphoreStore semaphores() {
      return inner.semaphores();
    }

    @Override
    public LeasedSemaphoreStore leasedSemaphores() {
      return inner.leasedSemaphores();
    }

    @Override
    public LatchStore latches() {
      return inner.latches();
    }

    @Override
    public AdminStore admin() {
      return inner.admin();
    }

    @Override
    public WakeupBus wakeups() {
      return hidden.contains(Feature.WAKEUP_PUSH) ? WakeupBus.NONE : inner.wakeups();
    }

    @Override
    public CompletionStage<RenewResult> renew(Collection<GrantRef> grants, long leaseMillis) {
      renewals.add(new Renewal(ticker.nanoTime(), List.copyOf(grants), leaseMillis));
      if (dropRenewals) {
        return new CompletableFuture<>();
      }
      List<GrantRef> named = List.copyOf(grants);
      if (loseRenewalAnswers) {
        renewNow(named, leaseMillis);
        return new CompletableFuture<>();
      }
      return holdRenewals
          ? heldBack(heldRenewals, () -> renewNow(named, leaseMillis))
          : renewNow(named, leaseMillis);
    }

    private CompletionStage<RenewResult> renewNow(List<GrantRef> grants, long leaseMillis) {
      long cap = validityCap;
      return cap < 0
          ? inner.renew(grants, leaseMillis)
          : inner
              .renew(grants, leaseMillis)
              .thenApply(answer -> new RenewResult(answer.gone(), answer.failed(), cap));
    }

    @Override
    public CompletionStage<AcquireResult> tryAcquire(LockRequest request) {
      acquireTimes.add(ticker.nanoTime());
      long cap = validityCap;
      CompletionStage<AcquireResult> answer =
          inner
              .locks()
              .tryAcquire(request)
              .thenApply(
                  result ->
                      cap < 0 || !result.isGranted()
                          ? result
                          : AcquireResult.grantedFor(result.fencingToken(), result.holds(), cap));
      return holdAcquireAnswers ? heldBack(heldAnswers, () -> answer) : answer;
    }

    @Override
    public CompletionStage<ReleaseResult> release(GrantRef grant, LockMode mode) {
      releases.add(grant);
      Throwable failure = releaseFailure;
      if (failure != null) {
        return CompletableFuture.failedFuture(failure);
      }
      return inner.locks().release(grant, mode);
    }

    @Override
    public boolean handsOver() {
      return inner.locks().handsOver();
    }

    @Override
    public CompletionStage<HandOverResult> releaseAndHandOver(
        GrantRef grant, LockMode mode, LockRequest next) {
      releases.add(grant);
      handOvers.add(next);
      Throwable failure = releaseFailure;
      if (failure != null) {
        return CompletableFuture.failedFuture(failure);
      }
      return holdHandOvers
          ? heldBack(heldHandOvers, () -> inner.locks().releaseAndHandOver(grant, mode, next))
          : inner.locks().releaseAndHandOver(grant, mode, next);
    }

    @Override
    public CompletionStage<Void> leaveQueue(String name, String owner) {
      return inner.locks().leaveQueue(name, owner);
    }

    @Override
    public void close() {
      inner.close();
    }
  }
}
