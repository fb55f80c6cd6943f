package io.latchkey.internal;

import io.latchkey.ClientInfo;
import io.latchkey.DistributedCountDownLatch;
import io.latchkey.DistributedLock;
import io.latchkey.DistributedMutex;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.DistributedSemaphore;
import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.LeaderElection;
import io.latchkey.LeadershipListener;
import io.latchkey.Lease;
import io.latchkey.LeasedSemaphore;
import io.latchkey.LockAdmin;
import io.latchkey.LockMode;
import io.latchkey.LockUpgradeException;
import io.latchkey.Primitive;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.BackendFactory;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.WakeupBus;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
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
 * <p>Grants. The backend counts holds; the {@link GrantLedger} mirrors, per grant (holder and
 * fencing token), the holds this client took, and owns everything that happens to a grant after it
 * was made: release, lease timers, loss, suspension, undo. Thread-owned locks are always known
 * locally, so a foreign unlock is refused without a round trip; token owners may release holds
 * taken by another process, so for them an unknown hold is asked of the backend.
 *
 * <p>Uncertain outcomes follow one policy, written in {@link BackendCalls}: an answer that arrives
 * after the caller gave up (timeout, cancellation) is undone exactly, once; a grant whose answer
 * came after its lease ran out is undone and never handed out; a call that failed without an answer
 * proves nothing and is left to run out with its lease.
 *
 * <p>Threads. One scheduler thread per client runs every timer (call timeouts, lease timers, the
 * watchdog, waiting, the presence heartbeat) and never user code. Lease-loss listeners and the late
 * completions of asynchronous operations run on {@link LatchkeyOptions#callbackExecutor()}.
 */
public final class LatchkeyClient implements Latchkey {
  private static final Logger LOG = LoggerFactory.getLogger(LatchkeyClient.class);
  private static final SecureRandom RANDOM = new SecureRandom();

  private final String clientId;
  private final LatchkeyOptions options;
  private final LatchkeyBackend backend;
  private final Set<Feature> features;
  private final ScheduledExecutorService scheduler;
  private final BackendCalls calls;
  private final GrantLedger ledger;
  private final WaitChannels waitChannels;
  private final LeaseRenewer renewer;
  private final Observing observing;
  private final Revocations revocations;
  private final Set<ElectionParticipant> elections =
      java.util.concurrent.ConcurrentHashMap.newKeySet();
  private final boolean pushWakeups;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final @Nullable Thread shutdownHook;
  private final String threadOwnerPrefix;
  private final ThreadLocal<String> threadOwner;

  private final @Nullable ScheduledFuture<?> heartbeat;

  private LatchkeyClient(
      String clientId,
      LatchkeyOptions options,
      ScheduledExecutorService scheduler,
      GrantLedger.BackendEvents events,
      LatchkeyBackend backend) {
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
    this.scheduler = scheduler;
    this.calls =
        new BackendCalls(
            backend.description(), options.operationTimeout(), scheduler, options.ticker());
    this.observing = new Observing(options.observer(), backend.description());
    this.waitChannels = new WaitChannels(backend.wakeups(), calls);
    this.ledger =
        new GrantLedger(
            backend,
            calls,
            scheduler,
            options.callbackExecutor(),
            options.ticker(),
            options.renewInterval(),
            observing,
            backend.locks().handsOver() ? waitChannels : null);
    events.bind(ledger);
    this.renewer = new LeaseRenewer(ledger, backend, calls, scheduler, options, observing);
    this.revocations = new Revocations(this);
    revocations.start();
    this.heartbeat = features.contains(Feature.PRESENCE) ? startHeartbeat() : null;
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
    return open(factory, options, null);
  }

  /**
   * Opens a client whose timers all run on {@code timers} (tests pass a manual scheduler), or on a
   * thread of its own if null. The client shuts the scheduler down when it closes.
   */
  static LatchkeyClient open(
      BackendFactory factory, LatchkeyOptions options, @Nullable ScheduledExecutorService timers) {
    byte[] id = new byte[16];
    RANDOM.nextBytes(id);
    String clientId = HexFormat.of().formatHex(id);
    ScheduledExecutorService scheduler = timers != null ? timers : newScheduler(clientId);
    GrantLedger.BackendEvents events = new GrantLedger.BackendEvents();
    LatchkeyBackend backend;
    try {
      backend =
          factory.open(
              new BackendContext(
                  clientId,
                  options.operationTimeout(),
                  options.leaseTime(),
                  scheduler,
                  BLOCKING_CALLS,
                  events));
    } catch (RuntimeException e) {
      scheduler.shutdownNow();
      throw e;
    }
    return new LatchkeyClient(clientId, options, scheduler, events, backend);
  }

  private static ScheduledExecutorService newScheduler(String clientId) {
    ScheduledThreadPoolExecutor scheduler =
        new ScheduledThreadPoolExecutor(
            1,
            runnable -> {
              Thread thread = new Thread(runnable, "latchkey-" + clientId.substring(0, 8));
              thread.setDaemon(true);
              return thread;
            });
    scheduler.setRemoveOnCancelPolicy(true);
    return scheduler;
  }

  /**
   * Where backends on synchronous client libraries run their calls: daemon threads made on demand
   * and shared by the clients of the JVM.
   */
  private static final java.util.concurrent.Executor BLOCKING_CALLS =
      java.util.concurrent.Executors.newCachedThreadPool(
          runnable -> {
            Thread thread = new Thread(runnable, "latchkey-backend-call");
            thread.setDaemon(true);
            return thread;
          });

  /**
   * The presence record lives a lease and a third; it is rewritten every third of a lease, so a
   * backend that lost it (a restart) has it back within a period.
   */
  private ScheduledFuture<?> startHeartbeat() {
    long period = Math.max(1, options.leaseTime().toMillis() / 3);
    long timeToLive = options.leaseTime().toMillis() + period;
    ClientInfo self =
        new ClientInfo(clientId, LocalHost.NAME, ProcessHandle.current().pid(), Instant.now());
    Supplier<CompletableFuture<@Nullable Void>> write =
        () ->
            calls
                .call(
                    () -> "write the presence record",
                    () -> backend.admin().heartbeat(self, timeToLive))
                .exceptionally(
                    failure -> {
                      LOG.debug("could not write the presence record: {}", failure.toString());
                      return null;
                    });
    // The first record is written before the client is handed out, so that a monitor that looks
    // right after connect sees it (this thread may wait: the timeout runs on the scheduler).
    write.get().join();
    return scheduler.scheduleAtFixedRate(
        () -> {
          var unused = write.get(); // its failure is logged by the stage itself
        },
        period,
        period,
        TimeUnit.MILLISECONDS);
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
    return new LockHandle(this, Arguments.name("lock", name), Primitive.LOCK, null);
  }

  @Override
  public DistributedLock fairLock(String name) {
    ensureOpen();
    require(Feature.FAIR_LOCK);
    return new LockHandle(this, Arguments.name("lock", name), Primitive.FAIR_LOCK, null);
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
  public LeaderElection joinElection(String name, LeadershipListener listener) {
    ensureOpen();
    Arguments.name("election", name);
    java.util.Objects.requireNonNull(listener, "listener must not be null");
    ElectionParticipant participant = new ElectionParticipant(this, name, listener);
    elections.add(participant);
    participant.join();
    return participant;
  }

  @Override
  public LockAdmin admin() {
    ensureOpen();
    return new Admin(this);
  }

  @Override
  @SuppressWarnings("FutureReturnValueIgnored") // the releases are collected and awaited below
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    // Participants leave first, so that none competes again once its lock is released below.
    elections.forEach(ElectionParticipant::close);
    renewer.stop();
    List<CompletableFuture<Void>> releases = new ArrayList<>();
    for (Hold hold : ledger.all()) {
      releases.add(ledger.releaseEverything(hold).exceptionally(lost -> null));
    }
    if (heartbeat != null) {
      heartbeat.cancel(false);
      // After any heartbeat in progress, so that none writes the record again.
      releases.add(
          CompletableFuture.supplyAsync(
                  () ->
                      calls.call(
                          () -> "delete the presence record",
                          () -> backend.admin().leave(clientId)),
                  scheduler)
              .thenCompose(deleted -> deleted)
              .exceptionally(failure -> null));
    }
    try {
      CompletableFuture.allOf(releases.toArray(new CompletableFuture<?>[0]))
          .get(options.operationTimeout().toNanos() * 2, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.warn("releasing held locks on close failed; their leases will run out: {}", e.toString());
    }
    revocations.stop();
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

  GrantLedger ledger() {
    return ledger;
  }

  ScheduledExecutorService scheduler() {
    return scheduler;
  }

  Observing observing() {
    return observing;
  }

  /** A participant left its election. */
  void left(ElectionParticipant participant) {
    elections.remove(participant);
  }

  Revocations revocations() {
    return revocations;
  }

  /**
   * The form in which an asynchronous operation's stage reaches the caller: if it completes later,
   * it completes on the callback executor, so the caller's dependent stages never run on the
   * scheduler or on a client library's network thread; if it is complete already, the caller's own
   * thread runs them. Cancelling the result cancels {@code source}.
   */
  @SuppressWarnings("FutureReturnValueIgnored") // both handlers complete or cancel by themselves
  <T> CompletableFuture<T> toCaller(CompletableFuture<T> source) {
    if (source.isDone()) {
      return source;
    }
    CompletableFuture<T> out = new CompletableFuture<>();
    source.whenComplete(
        (value, failure) -> {
          try {
            options
                .callbackExecutor()
                .execute(
                    () -> {
                      if (failure != null) {
                        out.completeExceptionally(BackendCalls.unwrap(failure));
                      } else {
                        out.complete(value);
                      }
                    });
          } catch (RejectedExecutionException refused) {
            out.completeExceptionally(refused);
          }
        });
    out.whenComplete(
        (value, failure) -> {
          if (out.isCancelled()) {
            source.cancel(false);
          }
        });
    return out;
  }

  /**
   * The caller's stage of an acquisition: the grant, or {@link io.latchkey.LockTimeoutException}
   * when the wait ran out (a null result), delivered as {@link #toCaller(CompletableFuture)} does.
   * Cancelling it cancels the acquisition; a grant that races with the cancellation, at any step on
   * its way, goes to {@code undo} instead of being dropped.
   */
  @SuppressWarnings("FutureReturnValueIgnored") // both handlers complete or cancel by themselves
  <T> CompletableFuture<T> acquiredAsync(
      CompletableFuture<@Nullable T> acquisition,
      Supplier<String> what,
      Duration wait,
      Consumer<? super T> undo) {
    CompletableFuture<T> out = new CompletableFuture<>();
    boolean answered = acquisition.isDone();
    acquisition.whenComplete(
        (value, failure) -> {
          Runnable deliver =
              () -> {
                if (failure != null) {
                  out.completeExceptionally(BackendCalls.unwrap(failure));
                } else if (value == null) {
                  out.completeExceptionally(Results.timeout(what, wait));
                } else if (!out.complete(value)) {
                  undo.accept(value);
                }
              };
          if (answered) {
            deliver.run();
            return;
          }
          try {
            options.callbackExecutor().execute(deliver);
          } catch (RejectedExecutionException refused) {
            if (value != null) {
              undo.accept(value);
            }
            out.completeExceptionally(refused);
          }
        });
    out.whenComplete(
        (value, failure) -> {
          if (out.isCancelled()) {
            acquisition.cancel(false);
          }
        });
    return out;
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
      Optional<String> reason = backend.missingFeatureReason(feature);
      throw reason.isPresent()
          ? new UnsupportedFeatureException(feature, backend.description(), reason.get())
          : new UnsupportedFeatureException(feature, backend.description());
    }
  }

  /**
   * One bounded backend call of an operation that needs {@code feature}, waited for as a blocking
   * API method does: the feature is checked before anything is sent.
   */
  <T> T callNeeding(
      Feature feature, Supplier<String> what, Supplier<? extends CompletionStage<T>> operation) {
    require(feature);
    return Blocking.join(calls.call(what, operation));
  }

  /** An explicit lease time needs the backend to expire grants by its own clock. */
  void requireLeaseTime(@Nullable Duration leaseTime) {
    if (leaseTime != null) {
      require(Feature.LEASE_TIME);
    }
  }

  /** An explicit lease time on a permit needs the backend to expire permits by its own clock. */
  void requirePermitLeaseTime(@Nullable Duration leaseTime) {
    if (leaseTime != null) {
      require(Feature.PERMIT_LEASE_TIME);
    }
  }

  /**
   * Starts acquiring a lock for an owner.
   *
   * @param ref the lock's name and the owner (a {@link ResourceType#LOCK} record)
   * @param waitNanos how long to wait; below zero waits forever
   * @param leaseTime an explicit lease, or null for the watchdog
   * @return the lease, or null if the wait ran out
   */
  CompletableFuture<@Nullable Lease> acquireLock(
      Primitive primitive,
      HolderRef ref,
      LockMode mode,
      boolean fair,
      long waitNanos,
      @Nullable Duration leaseTime) {
    ensureOpen();
    requireLeaseTime(leaseTime);
    boolean watchdog = leaseTime == null;
    long leaseMillis = leaseTime == null ? options.leaseTime().toMillis() : leaseTime.toMillis();
    // A waiter queues so that a release wakes it alone; a try that will not wait does not.
    long keepAliveMillis = waitNanos == 0 ? 0 : options.queueKeepAlive().toMillis();
    String name = ref.name();
    LockRequest request =
        new LockRequest(
            name, ref.holderId(), mode, leaseMillis, fair, keepAliveMillis, handoffMillis(options));
    long maxSleep =
        Math.min(options.recheckInterval().toNanos(), options.queueKeepAlive().toNanos() / 3);
    Acquisition.WaitPlan plan =
        new Acquisition.WaitPlan(
            primitive,
            ResourceType.LOCK,
            name,
            ref.holderId(),
            mode == LockMode.SHARED,
            waitNanos,
            maxSleep);
    return new Acquisition<>(
            this, plan, new LockAttempts(primitive, request, ref, watchdog, leaseMillis))
        .start();
  }

  /**
   * The attempts of one lock acquisition. Each attempt is one backend call, and this one object is
   * the acquisition's strategy, that call, and the reading of its answer (an uncontended acquire
   * makes one attempt, so lambdas for each part would be most of its garbage).
   */
  private final class LockAttempts
      implements Acquisition.Strategy<Lease>,
          BackendCalls.Call<AcquireResult>,
          Function<AcquireResult, Acquisition.Attempt<Lease>> {
    private final Primitive primitive;
    private final LockRequest request;
    private final HolderRef ref;
    private final boolean watchdog;
    private final long leaseMillis;
    // When the attempt on its way was sent: the attempts of one acquisition never overlap.
    private volatile long sentAt;

    LockAttempts(
        Primitive primitive,
        LockRequest request,
        HolderRef ref,
        boolean watchdog,
        long leaseMillis) {
      this.primitive = primitive;
      this.request = request;
      this.ref = ref;
      this.watchdog = watchdog;
      this.leaseMillis = leaseMillis;
    }

    @Override
    public CompletableFuture<Acquisition.Attempt<Lease>> attempt() {
      sentAt = options.ticker().nanoTime();
      return calls.call(this).thenApply(this);
    }

    @Override
    public String what() {
      return "acquire lock '" + request.name() + "'";
    }

    @Override
    public CompletionStage<AcquireResult> send() {
      return backend.locks().tryAcquire(request);
    }

    @Override
    public void lateAnswer(AcquireResult late) {
      undoLate(ref, request.mode(), late);
    }

    @Override
    public Acquisition.Attempt<Lease> apply(AcquireResult answer) {
      return lockAnswer(primitive, ref, request.mode(), answer, watchdog, sentAt, leaseMillis);
    }

    @Override
    public void compensate(Lease granted) {
      granted.releaseAsync();
    }

    @Override
    public @Nullable LockRequest handOverRequest() {
      // Only a queued waiter can be the head of the queue that a release hands over to.
      return request.queueKeepAliveMillis() == 0 ? null : request;
    }

    @Override
    public boolean waitsBehindLocalHolder() {
      // A fair lock serves waiters in their order of arrival on the backend, which a waiter that
      // did not ask it would lose; a shared waiter would wait for a hand-over that takes one owner.
      return request.mode() == LockMode.EXCLUSIVE
          && !request.fair()
          && request.queueKeepAliveMillis() > 0;
    }

    @Override
    public Acquisition.Attempt<Lease> handedOver(AcquireResult granted, long sentAt) {
      return lockAnswer(primitive, ref, request.mode(), granted, watchdog, sentAt, leaseMillis);
    }

    @Override
    public CompletionStage<?> abandon() {
      if (request.queueKeepAliveMillis() == 0) {
        return CompletableFuture.completedFuture(null);
      }
      return calls.call(
          () -> "leave the queue of lock '" + request.name() + "'",
          () -> backend.locks().leaveQueue(request.name(), request.owner()));
    }
  }

  /**
   * How long a woken lock waiter keeps the next grant to itself (see {@link LockRequest}): {@link
   * LockRequest#DEFAULT_HANDOFF_MILLIS}, or a third of a shorter queue keep-alive, so that a missed
   * turn ends well before the place of the waiter that missed it. A live waiter behind a paused or
   * dead head gets a free lock within this plus one re-check ({@code min(recheckInterval,
   * queueKeepAlive / 3)}), sooner if anyone else tries the lock meanwhile.
   */
  static long handoffMillis(LatchkeyOptions options) {
    return Math.max(
        1, Math.min(LockRequest.DEFAULT_HANDOFF_MILLIS, options.queueKeepAlive().toMillis() / 3));
  }

  private Acquisition.Attempt<Lease> lockAnswer(
      Primitive primitive,
      HolderRef ref,
      LockMode mode,
      AcquireResult answer,
      boolean watchdog,
      long sentAt,
      long leaseMillis) {
    return switch (answer.status()) {
      case GRANTED -> {
        if (inheritsForgottenHolds(ref, mode, answer)) {
          // Give every hold of that grant back and try again: the next grant is a fresh one.
          GrantRef grant = new GrantRef(ref, answer.fencingToken());
          for (int i = 0; i < answer.holds(); i++) {
            ledger.undo(grant, mode, "it re-entered holds this thread had already given up");
          }
          yield Acquisition.Attempt.<Lease>undone();
        }
        Hold hold =
            ledger.granted(
                primitive,
                ref,
                mode,
                answer.fencingToken(),
                watchdog,
                sentAt,
                TimeUnit.MILLISECONDS.toNanos(leaseMillis),
                validForNanos(answer));
        // A grant that came too late to use was undone: try again.
        yield hold == null
            ? Acquisition.Attempt.<Lease>undone()
            : Acquisition.Attempt.<Lease>granted(new HoldLease(this, hold, mode));
      }
      case BUSY -> Acquisition.Attempt.<Lease>busy(answer.retryAfterMillis(), answer.retryWhen());
      case UPGRADE_REFUSED ->
          throw new LockUpgradeException(
              "owner holds the read lock of '"
                  + ref.name()
                  + "' and asked for its write lock: release the read lock"
                  + " first (an upgrade would deadlock against other readers)");
    };
  }

  /**
   * Whether a grant to a thread owner re-entered holds that this client no longer counts: every
   * hold of a thread owner is taken by this client, so holds on the backend beyond the local ones
   * and this grant are left over from a release that never reached the backend (its call failed
   * without an answer). Handing the grant out would make the application see one fencing token
   * across acquisitions it saw as separate, and keep the leftover alive for ever.
   */
  private boolean inheritsForgottenHolds(HolderRef ref, LockMode mode, AcquireResult answer) {
    if (!isThreadOwner(ref.holderId())) {
      return false; // a token owner's other holds may belong to another process
    }
    Hold local = ledger.find(ref);
    int localHolds =
        local != null && local.fencingToken() == answer.fencingToken() && local.lost() == null
            ? local.holds(mode)
            : 0;
    return answer.holds() > localHolds + 1;
  }

  /** An acquire answer that came after the call timed out: undo exactly the grant it reports. */
  private void undoLate(HolderRef ref, LockMode mode, AcquireResult late) {
    if (late.isGranted()) {
      ledger.undo(
          new GrantRef(ref, late.fencingToken()), mode, "its answer came after the call timed out");
    }
  }

  static long validForNanos(AcquireResult answer) {
    return answer.validForMillis() < 0
        ? -1
        : TimeUnit.MILLISECONDS.toNanos(answer.validForMillis());
  }

  /** Registers a granted permit of a leased semaphore, or returns null if it came too late. */
  @Nullable Hold permitGranted(
      String name,
      String permitId,
      AcquireResult answer,
      boolean watchdog,
      long sentAt,
      long leaseNanos) {
    return ledger.granted(
        Primitive.LEASED_SEMAPHORE,
        new HolderRef(ResourceType.LEASED_SEMAPHORE, name, permitId),
        LockMode.EXCLUSIVE,
        answer.fencingToken(),
        watchdog,
        sentAt,
        leaseNanos,
        validForNanos(answer));
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
