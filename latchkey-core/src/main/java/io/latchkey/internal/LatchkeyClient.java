package io.latchkey.internal;

import io.latchkey.DistributedCountDownLatch;
import io.latchkey.DistributedLock;
import io.latchkey.DistributedMutex;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.DistributedSemaphore;
import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LeasedSemaphore;
import io.latchkey.LockAdmin;
import io.latchkey.LockMode;
import io.latchkey.LockUpgradeException;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.BackendFactory;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.WakeupBus;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine of one client. Policy lives here once for every primitive and backend: owner
 * identities, the registry of holds and their leases, lease-loss detection, the watchdog, waiting,
 * and bounded backend calls.
 *
 * <p>Owners. A thread owner is {@code <clientId>:<threadId>}; the client id is 128 random bits, so
 * owners are unique across processes and cannot be guessed. An explicit {@link
 * io.latchkey.OwnerToken} is its own owner id. A mutex acquire uses a fresh token per acquire,
 * which is what makes it non-reentrant.
 *
 * <p>Holds. The backend counts holds; this client mirrors the counts it was told, per holder, in a
 * {@link Hold}. Thread-owned locks are always known locally, so a foreign unlock is refused without
 * a round trip; token owners may release holds taken by another process, so for them an unknown
 * hold is asked of the backend.
 *
 * <p>Uncertain grants. If an acquire's answer is lost (timeout, connection reset), the backend may
 * have granted it. For a thread owner with no other hold of that lock, the engine releases once, in
 * the background, so that the lock is not left held by nobody's knowledge until its lease ends. For
 * token owners it cannot know whether another process holds that owner's lock, so it leaves the
 * lease to run out.
 */
public final class LatchkeyClient implements Latchkey {
  private static final Logger LOG = LoggerFactory.getLogger(LatchkeyClient.class);
  private static final SecureRandom RANDOM = new SecureRandom();

  private final String clientId;
  private final LatchkeyOptions options;
  private final LatchkeyBackend backend;
  private final Set<Feature> features;
  private final ScheduledThreadPoolExecutor scheduler;
  private final BackendCalls calls;
  private final HoldRegistry holds = new HoldRegistry();
  private final WaitChannels waitChannels;
  private final LeaseRenewer renewer;
  private final boolean pushWakeups;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final @Nullable Thread shutdownHook;
  private final String threadOwnerPrefix;
  private final ThreadLocal<String> threadOwner;

  private LatchkeyClient(String clientId, LatchkeyOptions options, LatchkeyBackend backend) {
    this.clientId = clientId;
    this.threadOwnerPrefix = clientId + ":";
    // A thread's owner id never changes; built once per thread, not on every acquire.
    this.threadOwner =
        ThreadLocal.withInitial(() -> threadOwnerPrefix + Thread.currentThread().getId());
    this.options = options;
    this.backend = backend;
    this.features = Set.copyOf(backend.features());
    this.pushWakeups =
        features.contains(Feature.WAKEUP_PUSH) && backend.wakeups() != WakeupBus.NONE;
    this.scheduler =
        new ScheduledThreadPoolExecutor(
            1,
            runnable -> {
              Thread thread = new Thread(runnable, "latchkey-" + clientId.substring(0, 8));
              thread.setDaemon(true);
              return thread;
            });
    scheduler.setRemoveOnCancelPolicy(true);
    this.calls = new BackendCalls(backend.description(), options.operationTimeout(), scheduler);
    this.waitChannels = new WaitChannels(backend.wakeups(), calls);
    this.renewer = new LeaseRenewer(this, holds, backend, calls, scheduler);
    if (options.closeOnShutdown()) {
      Thread hook = new Thread(this::close, "latchkey-shutdown-" + clientId.substring(0, 8));
      Runtime.getRuntime().addShutdownHook(hook);
      this.shutdownHook = hook;
    } else {
      this.shutdownHook = null;
    }
  }

  /**
   * Opens a backend and a client on it.
   *
   * @param factory opens the backend
   * @param options the client's settings
   * @return the client
   */
  public static LatchkeyClient open(BackendFactory factory, LatchkeyOptions options) {
    byte[] id = new byte[16];
    RANDOM.nextBytes(id);
    String clientId = HexFormat.of().formatHex(id);
    LatchkeyBackend backend =
        factory.open(new BackendContext(clientId, options.operationTimeout(), options.leaseTime()));
    return new LatchkeyClient(clientId, options, backend);
  }

  // ---- Latchkey ----

  @Override
  public String clientId() {
    return clientId;
  }

  @Override
  public String backendDescription() {
    return backend.description();
  }

  @Override
  public Set<Feature> features() {
    return features;
  }

  @Override
  public LatchkeyOptions options() {
    return options;
  }

  @Override
  public DistributedLock lock(String name) {
    ensureOpen();
    return new LockHandle(this, Arguments.name("lock", name), LockMode.EXCLUSIVE, false, null);
  }

  @Override
  public DistributedLock fairLock(String name) {
    ensureOpen();
    require(Feature.FAIR_LOCK);
    return new LockHandle(this, Arguments.name("lock", name), LockMode.EXCLUSIVE, true, null);
  }

  @Override
  public DistributedMutex mutex(String name) {
    ensureOpen();
    return new MutexHandle(this, Arguments.name("mutex", name));
  }

  @Override
  public DistributedReadWriteLock readWriteLock(String name) {
    ensureOpen();
    require(Feature.READ_WRITE_LOCK);
    return new ReadWriteLockHandle(this, Arguments.name("lock", name), null);
  }

  @Override
  public DistributedSemaphore semaphore(String name) {
    ensureOpen();
    require(Feature.SEMAPHORE);
    return new SemaphoreHandle(this, Arguments.name("semaphore", name));
  }

  @Override
  public LeasedSemaphore leasedSemaphore(String name) {
    ensureOpen();
    require(Feature.LEASED_SEMAPHORE);
    return new LeasedSemaphoreHandle(this, Arguments.name("semaphore", name));
  }

  @Override
  public DistributedCountDownLatch countDownLatch(String name) {
    ensureOpen();
    require(Feature.COUNT_DOWN_LATCH);
    return new CountDownLatchHandle(this, Arguments.name("latch", name));
  }

  @Override
  public LockAdmin admin() {
    ensureOpen();
    return new Admin(this);
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    renewer.stop();
    List<CompletableFuture<Void>> releases = new ArrayList<>();
    for (Hold hold : holds.all()) {
      if (hold.lost() == null) {
        releases.add(releaseEverything(hold));
      }
    }
    try {
      CompletableFuture.allOf(releases.toArray(new CompletableFuture<?>[0]))
          .get(options.operationTimeout().toNanos() * 2, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.warn("releasing held locks on close failed; their leases will run out: {}", e.toString());
    }
    calls.close();
    try {
      backend.close();
    } finally {
      scheduler.shutdownNow();
      if (shutdownHook != null && Thread.currentThread() != shutdownHook) {
        try {
          Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
          // The JVM is exiting; the hook runs or has run.
        }
      }
    }
  }

  @Override
  public String toString() {
    return "Latchkey[" + backend.description() + ", client " + clientId + "]";
  }

  // ---- engine services for the handles ----

  LatchkeyBackend backend() {
    return backend;
  }

  BackendCalls calls() {
    return calls;
  }

  WaitChannels waitChannels() {
    return waitChannels;
  }

  HoldRegistry holds() {
    return holds;
  }

  boolean hasPushWakeups() {
    return pushWakeups;
  }

  String currentThreadOwner() {
    return threadOwner.get();
  }

  boolean isThreadOwner(String owner) {
    return owner.startsWith(threadOwnerPrefix);
  }

  void ensureOpen() {
    if (closed.get()) {
      throw new IllegalStateException("this latchkey client is closed");
    }
  }

  void require(Feature feature) {
    if (!features.contains(feature)) {
      throw new UnsupportedFeatureException(feature, backend.description());
    }
  }

  /**
   * Starts acquiring a lock for {@code owner}.
   *
   * @param waitNanos how long to wait; below zero waits forever
   * @param leaseTime an explicit lease, or null for the watchdog
   * @return the lease, or null if the wait ran out
   */
  // Handler futures left unread on purpose: leaving a wait queue is best effort: a failed leave
  // expires with the queue keep-alive.
  @SuppressWarnings("FutureReturnValueIgnored")
  CompletableFuture<@Nullable Lease> acquireLock(
      String name,
      String owner,
      LockMode mode,
      boolean fair,
      long waitNanos,
      @Nullable Duration leaseTime) {
    ensureOpen();
    boolean watchdog = leaseTime == null;
    long leaseMillis = leaseTime == null ? options.leaseTime().toMillis() : leaseTime.toMillis();
    // A waiter queues so that a release wakes it alone; a try that will not wait does not.
    long keepAliveMillis = waitNanos == 0 ? 0 : options.queueKeepAlive().toMillis();
    LockRequest request = new LockRequest(name, owner, mode, leaseMillis, fair, keepAliveMillis);
    HolderRef ref = new HolderRef(ResourceType.LOCK, name, owner);
    long maxSleep =
        Math.min(options.recheckInterval().toNanos(), options.queueKeepAlive().toNanos() / 3);
    Acquisition<Lease> acquisition =
        new Acquisition<>(
            this,
            ResourceType.LOCK,
            name,
            owner,
            mode == LockMode.SHARED,
            waitNanos,
            maxSleep,
            () -> {
              long sentAt = options.ticker().nanoTime();
              return calls
                  .call(
                      () -> "acquire lock '" + name + "'",
                      () -> backend.locks().tryAcquire(request))
                  .handle(
                      (answer, failure) -> {
                        if (failure != null) {
                          compensateUncertainGrant(ref, mode, failure);
                          throw asRuntime(failure);
                        }
                        return switch (answer.status()) {
                          case GRANTED -> {
                            Hold hold =
                                registerGrant(
                                    ref,
                                    mode,
                                    answer.fencingToken(),
                                    watchdog,
                                    sentAt,
                                    TimeUnit.MILLISECONDS.toNanos(leaseMillis));
                            yield Acquisition.Attempt.<Lease>granted(
                                new HoldLease(this, hold, mode));
                          }
                          case BUSY -> Acquisition.Attempt.<Lease>busy(answer.retryAfterMillis());
                          case UPGRADE_REFUSED ->
                              throw new LockUpgradeException(
                                  "owner holds the read lock of '"
                                      + name
                                      + "' and asked for its write lock: release the read lock"
                                      + " first (an upgrade would deadlock against other readers)");
                        };
                      });
            },
            Lease::releaseAsync,
            () -> {
              if (keepAliveMillis > 0) {
                calls.call(
                    () -> "leave the queue of lock '" + name + "'",
                    () -> backend.locks().leaveQueue(name, owner));
              }
            });
    return acquisition.start();
  }

  private void compensateUncertainGrant(HolderRef ref, LockMode mode, Throwable failure) {
    if (!(BackendCalls.unwrap(failure) instanceof io.latchkey.BackendUnavailableException)) {
      return;
    }
    if (!isThreadOwner(ref.holderId()) || holds.find(ref) != null) {
      return;
    }
    calls
        .call(
            () -> "release uncertain grant of lock '" + ref.name() + "'",
            () -> backend.locks().release(ref.name(), ref.holderId(), mode))
        .exceptionally(
            e -> {
              LOG.debug("could not release uncertain grant of {}: {}", ref.name(), e.toString());
              return null;
            });
  }

  private Hold registerGrant(
      HolderRef ref, LockMode mode, long token, boolean watchdog, long sentAt, long leaseNanos) {
    HoldRegistry.Granted granted = holds.granted(ref, mode, token, watchdog, sentAt, leaseNanos);
    Hold superseded = granted.superseded();
    if (superseded != null) {
      markLost(
          superseded,
          new LeaseLostException(
              describe(superseded)
                  + " was lost: the backend had forgotten it when the same owner acquired again",
              null));
    }
    if (!watchdog) {
      watchExplicitLease(granted.hold());
    }
    return granted.hold();
  }

  /**
   * Releases one grant (lock) or the permit (leased semaphore).
   *
   * <p>A lost grant is not released on the backend: the backend has forgotten it already, or (an
   * explicit lease that ran out by this client's clock a moment before the backend's) will in a
   * moment. Releasing it there by owner could undo a newer grant to the same owner.
   */
  CompletableFuture<Void> release(Hold hold, LockMode mode) {
    LeaseLostException lost = hold.lost();
    if (lost != null) {
      holds.dropOne(hold, mode);
      return CompletableFuture.failedFuture(lost);
    }
    if (hold.holds(mode) == 0) {
      // Every grant of this hold was released already, e.g. a permit released by its id.
      return CompletableFuture.failedFuture(
          new IllegalStateException(describe(hold) + " was already released"));
    }
    return releaseOnBackend(hold, mode)
        .whenComplete(
            (remaining, failure) -> {
              if (failure != null) {
                // The backend could not be told. Forget the grant here so that the watchdog stops
                // renewing it: its lease then runs out on the backend by itself, as documented.
                holds.dropOne(hold, mode);
              }
            })
        .thenApply(
            remaining -> {
              if (remaining < 0) {
                LeaseLostException gone =
                    new LeaseLostException(
                        describe(hold)
                            + " was lost before it was released: the backend no longer knew it"
                            + " (its lease expired, or it was force-released)",
                        null);
                markLost(hold, gone);
                holds.dropOne(hold, mode);
                throw gone;
              }
              holds.dropOne(hold, mode);
              return null;
            });
  }

  /** Returns the holds left in that mode, or -1 if the backend did not know the holder. */
  private CompletableFuture<Integer> releaseOnBackend(Hold hold, LockMode mode) {
    HolderRef ref = hold.ref;
    if (ref.type() == ResourceType.LEASED_SEMAPHORE) {
      return calls
          .call(
              () -> "release a permit of semaphore '" + ref.name() + "'",
              () -> backend.leasedSemaphores().release(ref.name(), ref.holderId()))
          .thenApply(wasHeld -> wasHeld ? 0 : -1);
    }
    return calls
        .call(
            () -> "release lock '" + ref.name() + "'",
            () -> backend.locks().release(ref.name(), ref.holderId(), mode))
        .thenApply(result -> result.wasHeld() ? result.remainingHolds() : -1);
  }

  private CompletableFuture<Void> releaseEverything(Hold hold) {
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

  /** Registers a granted permit of a leased semaphore. */
  Hold permitGranted(
      String name, String permitId, long token, boolean watchdog, long sentAt, long leaseNanos) {
    return registerGrant(
        new HolderRef(ResourceType.LEASED_SEMAPHORE, name, permitId),
        LockMode.EXCLUSIVE,
        token,
        watchdog,
        sentAt,
        leaseNanos);
  }

  /**
   * An explicit lease is not renewed; when it runs out by this client's clock while still held, the
   * hold is lost, loudly.
   */
  private void watchExplicitLease(Hold hold) {
    // One timer per hold, not per grant: a re-entry that extends the lease is seen when it fires.
    hold.watchExpiry(
        () -> {
          long delay = hold.validUntilNanos() - options.ticker().nanoTime();
          return scheduler.schedule(
              () -> checkExplicitLease(hold), Math.max(0, delay), TimeUnit.NANOSECONDS);
        });
  }

  private void checkExplicitLease(Hold hold) {
    hold.expiryChecked();
    if (hold.lost() != null || hold.totalHolds() == 0 || hold.renewedByWatchdog()) {
      return;
    }
    if (hold.validUntilNanos() - options.ticker().nanoTime() > 0) {
      watchExplicitLease(hold);
      return;
    }
    markLost(
        hold, new LeaseLostException(describe(hold) + " was lost: its lease time ran out", null));
  }

  void markLost(Hold hold, LeaseLostException reason) {
    List<Consumer<LeaseLostException>> listeners = hold.markLost(reason);
    if (listeners.isEmpty()) {
      return;
    }
    LOG.warn("{}", reason.getMessage());
    for (Consumer<LeaseLostException> listener : listeners) {
      notifyLost(listener, reason);
    }
  }

  void onLost(Hold hold, Consumer<LeaseLostException> listener) {
    if (!hold.addListener(listener)) {
      LeaseLostException lost = hold.lost();
      if (lost != null) {
        notifyLost(listener, lost);
      }
    }
  }

  private void notifyLost(Consumer<LeaseLostException> listener, LeaseLostException reason) {
    try {
      scheduler.execute(() -> callListener(listener, reason));
    } catch (java.util.concurrent.RejectedExecutionException closing) {
      callListener(listener, reason);
    }
  }

  private static void callListener(
      Consumer<LeaseLostException> listener, LeaseLostException reason) {
    try {
      listener.accept(reason);
    } catch (RuntimeException e) {
      LOG.error("lease-loss listener failed", e);
    }
  }

  boolean isValid(Hold hold) {
    return hold.lost() == null
        && hold.totalHolds() > 0
        && hold.validUntilNanos() - options.ticker().nanoTime() > 0;
  }

  Duration remaining(Hold hold) {
    return Duration.ofNanos(Math.max(0, hold.validUntilNanos() - options.ticker().nanoTime()));
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
              + "…";
    };
  }

  static RuntimeException asRuntime(Throwable failure) {
    Throwable cause = BackendCalls.unwrap(failure);
    if (cause instanceof RuntimeException runtime) {
      return runtime;
    }
    return new io.latchkey.LatchkeyException(cause.toString(), cause);
  }

  static String lowerCase(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT);
  }
}
