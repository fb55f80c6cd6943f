package io.latchkey.memory;

import io.latchkey.ClientInfo;
import io.latchkey.HolderInfo;
import io.latchkey.LatchInfo;
import io.latchkey.LeasedSemaphoreInfo;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.PermitInfo;
import io.latchkey.SemaphoreInfo;
import io.latchkey.Ticker;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendFactory;
import io.latchkey.spi.FenceStore;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HandOverResult;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.Wakeup;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * An in-memory lock service: the state that a Redis server, a database or a ZooKeeper ensemble
 * keeps for the other backends. Several latchkey clients opened on one server contend as separate
 * processes would. Expiry follows the server's own {@link Ticker}, which tests can drive by hand.
 *
 * <pre>{@code
 * MemoryLockServer server = new MemoryLockServer();
 * try (Latchkey a = Latchkey.using(server.backend(), options);
 *      Latchkey b = Latchkey.using(server.backend(), options)) { ... }
 * }</pre>
 *
 * <p>{@code Latchkey.connect("memory:")} uses one server per JVM; {@code memory:NAME} a server per
 * name.
 *
 * <p>Implementation: every operation runs under the server's monitor, which makes each one atomic
 * as the SPI demands; expired holders, permits and queue entries are dropped lazily by the
 * operation that meets them. Wake-ups are delivered on one dispatcher thread, in order, after the
 * monitor is released.
 */
public final class MemoryLockServer implements AutoCloseable {
  private static final Map<String, MemoryLockServer> NAMED = new ConcurrentHashMap<>();

  private static final java.util.concurrent.atomic.AtomicLong ANONYMOUS =
      new java.util.concurrent.atomic.AtomicLong();

  private final Ticker ticker;
  private final String name;
  private final Map<String, LockRecord> locks = new HashMap<>();
  private final Map<String, Long> lockFences = new HashMap<>();
  private final Map<String, Integer> semaphores = new HashMap<>();
  private final Map<String, PermitPool> permitPools = new HashMap<>();
  private final Map<String, Long> latches = new HashMap<>();
  private final Map<Channel, List<Consumer<Wakeup>>> subscribers = new ConcurrentHashMap<>();
  private final Map<String, Presence> clients = new ConcurrentHashMap<>();
  private final Map<String, List<Consumer<GrantRef>>> revocationListeners =
      new ConcurrentHashMap<>();
  private final ExecutorService dispatcher =
      Executors.newSingleThreadExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "latchkey-memory-wakeups");
            thread.setDaemon(true);
            return thread;
          });

  private volatile boolean closed;

  /** The epoch record ({@link FenceStore#epoch}); 0 while there is none. */
  private long epoch;

  /** When the epoch record's quarantine marker ends, by {@link #now()}. */
  private long quarantineEnds;

  /** A server whose leases expire by the JVM's monotonic clock. */
  public MemoryLockServer() {
    this(Ticker.system());
  }

  /**
   * @param ticker the server's clock, e.g. a manual one in tests
   */
  public MemoryLockServer(Ticker ticker) {
    this(
        Objects.requireNonNull(ticker, "ticker must not be null"),
        "anonymous-" + ANONYMOUS.incrementAndGet());
  }

  private MemoryLockServer(Ticker ticker, String name) {
    this.ticker = ticker;
    this.name = name;
  }

  /**
   * @param name a server name
   * @return the JVM-wide server of that name, created on first use
   */
  public static MemoryLockServer named(String name) {
    Objects.requireNonNull(name, "name must not be null");
    return NAMED.computeIfAbsent(name, n -> new MemoryLockServer(Ticker.system(), n));
  }

  /**
   * Stops the server: every record is dropped, the wake-up thread ends, and every operation of a
   * backend opened on it fails from now on, as if the server had gone away. A named server is
   * forgotten, so that {@code memory:NAME} later gets a new, empty one. Idempotent.
   */
  @Override
  public void close() {
    closed = true;
    NAMED.remove(name, this);
    dispatcher.shutdownNow();
    synchronized (this) {
      locks.clear();
      lockFences.clear();
      semaphores.clear();
      permitPools.clear();
      latches.clear();
      epoch = 0;
      quarantineEnds = 0;
    }
    subscribers.clear();
    revocationListeners.clear();
    clients.clear();
  }

  /** See {@link FenceStore#raiseLockFence}. */
  synchronized long raiseLockFence(String lockName, long atLeast) {
    requireNotNegative("atLeast", atLeast);
    long current = lockFences.getOrDefault(lockName, 0L);
    if (atLeast > current) {
      lockFences.put(lockName, atLeast);
      return atLeast;
    }
    return current;
  }

  /** See {@link FenceStore#epoch}. */
  synchronized FenceStore.Epoch epoch(long atLeast, long quarantineMillis) {
    requireNotNegative("atLeast", atLeast);
    requireNotNegative("quarantineMillis", quarantineMillis);
    long now = now();
    if (epoch == 0 && atLeast > 0 && quarantineMillis > 0) {
      quarantineEnds = now + quarantineMillis;
    }
    epoch = Math.max(epoch, atLeast);
    return new FenceStore.Epoch(epoch, Math.max(0, quarantineEnds - now));
  }

  private static void requireNotNegative(String what, long value) {
    if (value < 0) {
      throw new IllegalArgumentException(what + " must not be negative, was " + value);
    }
  }

  /**
   * @return true once {@link #close()} was called
   */
  public boolean isClosed() {
    return closed;
  }

  /**
   * @return a factory opening a backend (one client's connection) on this server
   */
  public BackendFactory backend() {
    return context -> new MemoryBackend(this, context.clientId());
  }

  /**
   * @return how backends of this server describe themselves: {@code memory:NAME}, unique per server
   *     in this JVM (a multi-lock orders its members by it)
   */
  String description() {
    return "memory:" + name;
  }

  private long now() {
    return TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime());
  }

  // ---- locks ----

  AcquireResult tryAcquire(LockRequest request, String clientId) {
    Runnable wakeup = () -> {};
    AcquireResult result;
    synchronized (this) {
      long now = now();
      LockRecord lock = locks.computeIfAbsent(request.name(), n -> new LockRecord());
      lock.purge(now);
      Holder me = lock.holders.get(request.owner());
      if (request.mode() == LockMode.EXCLUSIVE
          && me != null
          && me.exclusive == 0
          && me.shared > 0) {
        return AcquireResult.upgradeRefused();
      }
      boolean blockedByHolders = false;
      long obstacleEnds = -1;
      for (Map.Entry<String, Holder> entry : lock.holders.entrySet()) {
        if (entry.getKey().equals(request.owner())) {
          continue;
        }
        Holder other = entry.getValue();
        if (request.mode() == LockMode.EXCLUSIVE || other.exclusive > 0) {
          blockedByHolders = true;
          obstacleEnds = Math.max(obstacleEnds, other.expiresAt - now);
        }
      }
      if (request.owner().equals(lock.wokenOwner)) {
        // The woken owner came: its hand-off is over, granted or not.
        lock.wokenOwner = null;
      }
      boolean blockedByQueue = false;
      if (me == null && !blockedByHolders) {
        String keptFor = pendingHandoff(request, lock, now);
        if (keptFor != null) {
          boolean bothShared =
              request.mode() == LockMode.SHARED && lock.queuedMode(keptFor) == LockMode.SHARED;
          if (keptFor.equals(request.owner())) {
            lock.wokenOwner = null;
          } else if (!bothShared) {
            blockedByQueue = true;
            obstacleEnds = lock.wokenAt + request.handoffMillis() - now;
          }
        }
        if (request.fair()) {
          String head = lock.queueHead();
          blockedByQueue = head != null && !head.equals(request.owner());
        }
        if (request.mode() == LockMode.SHARED) {
          // Writers are preferred: a queued writer ahead of this reader lets it wait, so that
          // readers cannot starve it. Until the writer's place expires, if it dies meanwhile.
          long writerPlaceEnds = lock.writerAheadPlaceEnds(request.owner(), now);
          if (writerPlaceEnds >= 0) {
            blockedByQueue = true;
            obstacleEnds = writerPlaceEnds;
          }
        }
      }
      if (blockedByHolders || blockedByQueue) {
        if (request.queueKeepAliveMillis() > 0) {
          // A waiter already queued keeps its place (insertion order); its deadline moves.
          lock.queue.put(
              request.owner(),
              new QueuePlace(request.mode(), now + request.queueKeepAliveMillis()));
        }
        dropIfEmpty(request.name(), lock);
        return AcquireResult.busy(obstacleEnds);
      }
      boolean wasQueued = lock.queue.remove(request.owner()) != null;
      if (me == null) {
        long token = lockFences.merge(request.name(), 1L, Long::sum);
        me = new Holder(clientId, token);
        lock.holders.put(request.owner(), me);
      }
      if (request.mode() == LockMode.SHARED) {
        me.shared++;
      } else {
        me.exclusive++;
      }
      me.expiresAt = Math.max(me.expiresAt, now + request.leaseMillis());
      int holds = request.mode() == LockMode.SHARED ? me.shared : me.exclusive;
      String next = lock.queueHead();
      if (request.mode() == LockMode.SHARED
          && wasQueued
          && next != null
          && lock.queuedMode(next) == LockMode.SHARED) {
        // A queued reader entered: the reader behind it may enter beside it (a writer may not).
        wakeup = wake(request.name(), lock, next, now);
      }
      result = AcquireResult.granted(me.token, holds);
    }
    wakeup.run();
    return result;
  }

  ReleaseResult release(GrantRef grant, LockMode mode) {
    return releaseAndHandOver(grant, mode, null, "").released();
  }

  /**
   * A release that, when the lock becomes acquirable and {@code next}'s owner heads the queue or
   * nobody is queued, makes that owner's attempt in the same step instead of waking it (see {@link
   * io.latchkey.spi.LockStore#releaseAndHandOver}); without {@code next}, a plain release.
   */
  HandOverResult releaseAndHandOver(
      GrantRef grant, LockMode mode, @Nullable LockRequest next, String clientId) {
    String name = grant.name();
    String owner = grant.holderId();
    Runnable wakeup = () -> {};
    ReleaseResult result;
    synchronized (this) {
      long now = now();
      LockRecord lock = locks.get(name);
      if (lock == null) {
        return new HandOverResult(ReleaseResult.NOT_HELD, null);
      }
      lock.purge(now);
      Holder me = lock.holders.get(owner);
      if (me == null
          || !grant.matches(me.token)
          || (mode == LockMode.SHARED ? me.shared : me.exclusive) == 0) {
        dropIfEmpty(name, lock);
        return new HandOverResult(ReleaseResult.NOT_HELD, null);
      }
      int remaining = mode == LockMode.SHARED ? --me.shared : --me.exclusive;
      if (me.shared == 0 && me.exclusive == 0) {
        lock.holders.remove(owner);
      }
      result = ReleaseResult.released(remaining);
      boolean acquirable = remaining == 0 && acquirableAfter(lock, mode);
      String head = acquirable ? lock.queueHead() : null;
      if (acquirable && next != null && (head == null || head.equals(next.owner()))) {
        // The head comes for the turn it would have been woken for, in this same step; with
        // nobody queued, no turn is pending for anyone else.
        lock.wokenOwner = null;
        return new HandOverResult(result, tryAcquire(next, clientId));
      }
      if (head != null) {
        wakeup = wake(name, lock, head, now);
      }
      dropIfEmpty(name, lock);
    }
    wakeup.run();
    return new HandOverResult(result, null);
  }

  /**
   * The owner a free lock is kept for (its hand-off is pending and younger than the request's
   * {@code handoffMillis}), or null. A woken owner that missed its turn (its hand-off is that old,
   * or its place ran out) is dropped from the queue here, and the next head is woken in its stead
   * and kept for; if that is the requesting owner, its attempt goes on without a wake-up. Call
   * after purge, on a lock that no holder keeps from this request.
   */
  private @Nullable String pendingHandoff(LockRequest request, LockRecord lock, long now) {
    String woken = lock.wokenOwner;
    if (woken == null) {
      return null;
    }
    if (lock.queue.containsKey(woken) && now - lock.wokenAt < request.handoffMillis()) {
      return woken;
    }
    lock.wokenOwner = null;
    lock.queue.remove(woken);
    String head = lock.queueHead();
    if (head == null) {
      return null;
    }
    lock.wokenOwner = head;
    lock.wokenAt = now;
    if (!head.equals(request.owner())) {
      // Delivered after the monitor is released, on the dispatcher thread like every wake-up.
      publish(ResourceType.LOCK, request.name(), Wakeup.forOwner(head)).run();
    }
    return head;
  }

  /** Wakes a queued owner and starts its hand-off; returns the delivery. */
  private Runnable wake(String name, LockRecord lock, String owner, long now) {
    lock.wokenOwner = owner;
    lock.wokenAt = now;
    return publish(ResourceType.LOCK, name, Wakeup.forOwner(owner));
  }

  /**
   * After a release: if nobody holds the lock exclusively any more (or nobody at all, after a
   * shared release), the head of the wait queue may enter (it is woken, and only it).
   */
  private static boolean acquirableAfter(LockRecord lock, LockMode released) {
    boolean exclusiveLeft = lock.holders.values().stream().anyMatch(h -> h.exclusive > 0);
    return !exclusiveLeft && (released == LockMode.EXCLUSIVE || lock.holders.isEmpty());
  }

  void leaveQueue(String name, String owner) {
    Runnable wakeup = () -> {};
    synchronized (this) {
      LockRecord lock = locks.get(name);
      if (lock == null) {
        return;
      }
      long now = now();
      lock.purge(now);
      boolean wasHead = owner.equals(lock.queueHead());
      lock.queue.remove(owner);
      if (owner.equals(lock.wokenOwner)) {
        lock.wokenOwner = null;
      }
      String next = lock.queueHead();
      boolean exclusiveHeld = lock.holders.values().stream().anyMatch(h -> h.exclusive > 0);
      if (wasHead && next != null && !exclusiveHeld) {
        wakeup = wake(name, lock, next, now);
      }
      dropIfEmpty(name, lock);
    }
    wakeup.run();
  }

  boolean evict(String name, String owner) {
    Runnable wakeup;
    synchronized (this) {
      LockRecord lock = locks.get(name);
      if (lock == null) {
        return false;
      }
      long now = now();
      lock.purge(now);
      Holder evicted = lock.holders.remove(owner);
      if (evicted == null) {
        dropIfEmpty(name, lock);
        return false;
      }
      String head =
          acquirableAfter(lock, evicted.exclusive > 0 ? LockMode.EXCLUSIVE : LockMode.SHARED)
              ? lock.queueHead()
              : null;
      wakeup = head == null ? () -> {} : wake(name, lock, head, now);
      dropIfEmpty(name, lock);
    }
    wakeup.run();
    return true;
  }

  boolean forceRelease(String name) {
    Runnable wakeup;
    boolean held;
    synchronized (this) {
      LockRecord lock = locks.get(name);
      if (lock == null) {
        return false;
      }
      lock.purge(now());
      held = !lock.holders.isEmpty();
      lock.holders.clear();
      wakeup = publish(ResourceType.LOCK, name, Wakeup.of(Wakeup.ALL));
      dropIfEmpty(name, lock);
    }
    wakeup.run();
    return held;
  }

  /**
   * Sends each live holder's client a revocation request for its grant; returns how many holders
   * were asked.
   */
  int requestRevocation(String name) {
    List<Runnable> deliveries = new ArrayList<>();
    synchronized (this) {
      LockRecord lock = locks.get(name);
      if (lock == null) {
        return 0;
      }
      lock.purge(now());
      dropIfEmpty(name, lock);
      for (Map.Entry<String, Holder> entry : lock.holders.entrySet()) {
        Holder holder = entry.getValue();
        GrantRef grant =
            new GrantRef(new HolderRef(ResourceType.LOCK, name, entry.getKey()), holder.token);
        List<Consumer<GrantRef>> listeners =
            revocationListeners.getOrDefault(holder.clientId, List.of());
        List<Consumer<GrantRef>> snapshot = List.copyOf(listeners);
        deliveries.add(() -> snapshot.forEach(listener -> listener.accept(grant)));
      }
    }
    if (!closed) {
      deliveries.forEach(dispatcher::execute);
    }
    return deliveries.size();
  }

  /** Delivers the revocation requests aimed at one client's grants; returns the cancellation. */
  Runnable subscribeRevocations(String clientId, Consumer<GrantRef> listener) {
    revocationListeners.computeIfAbsent(clientId, c -> new CopyOnWriteArrayList<>()).add(listener);
    return () ->
        revocationListeners.computeIfPresent(
            clientId,
            (c, listeners) -> {
              listeners.remove(listener);
              return listeners.isEmpty() ? null : listeners;
            });
  }

  synchronized Optional<LockInfo> inspect(String name) {
    LockRecord lock = locks.get(name);
    if (lock == null) {
      return Optional.empty();
    }
    long now = now();
    lock.purge(now);
    dropIfEmpty(name, lock);
    if (lock.holders.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(lock.info(name, now));
  }

  synchronized List<LockInfo> list() {
    long now = now();
    List<LockInfo> result = new ArrayList<>();
    for (Map.Entry<String, LockRecord> entry : new TreeMap<>(locks).entrySet()) {
      LockRecord lock = entry.getValue();
      lock.purge(now);
      dropIfEmpty(entry.getKey(), lock);
      if (!lock.holders.isEmpty()) {
        result.add(lock.info(entry.getKey(), now));
      }
    }
    return result;
  }

  private void dropIfEmpty(String name, LockRecord lock) {
    if (lock.holders.isEmpty() && lock.queue.isEmpty()) {
      locks.remove(name, lock);
    }
  }

  // ---- clients ----

  void heartbeat(ClientInfo client, long timeToLiveMillis) {
    clients.put(client.clientId(), new Presence(client, now() + timeToLiveMillis));
  }

  void left(String clientId) {
    clients.remove(clientId);
  }

  List<ClientInfo> clients() {
    long now = now();
    clients.values().removeIf(presence -> presence.expiresAt() <= now);
    List<ClientInfo> live = new ArrayList<>();
    clients.values().forEach(presence -> live.add(presence.client()));
    live.sort(java.util.Comparator.comparing(ClientInfo::clientId));
    return live;
  }

  // ---- renewal ----

  synchronized Set<GrantRef> renew(Collection<GrantRef> grants, long leaseMillis) {
    long now = now();
    Set<GrantRef> gone = new HashSet<>();
    for (GrantRef grant : grants) {
      Leased leased = find(grant.holder(), now);
      // Renewal names the grant exactly: GrantRef.ANY_TOKEN is for a foreign release only.
      if (leased == null || grant.fencingToken() != leased.token()) {
        gone.add(grant);
      } else {
        leased.extendTo(now + leaseMillis);
      }
    }
    return gone;
  }

  private @Nullable Leased find(HolderRef ref, long now) {
    if (ref.type() == ResourceType.LOCK) {
      LockRecord lock = locks.get(ref.name());
      if (lock == null) {
        return null;
      }
      lock.purge(now);
      return lock.holders.get(ref.holderId());
    }
    if (ref.type() == ResourceType.LEASED_SEMAPHORE) {
      PermitPool pool = permitPools.get(ref.name());
      if (pool == null) {
        return null;
      }
      pool.purge(now);
      return pool.granted.get(ref.holderId());
    }
    return null;
  }

  // ---- semaphores ----

  synchronized boolean trySetPermits(String name, int permits) {
    return semaphores.putIfAbsent(name, permits) == null;
  }

  void addPermits(String name, int delta) {
    Runnable wakeup;
    synchronized (this) {
      wakeup = changePermits(name, delta);
    }
    wakeup.run();
  }

  /** Returns the wake-up, to run once the monitor is released. */
  private Runnable changePermits(String name, int delta) {
    semaphores.put(name, countAfter("semaphore", name, semaphores.getOrDefault(name, 0), delta));
    return delta > 0 ? publish(ResourceType.SEMAPHORE, name, Wakeup.of(delta)) : () -> {};
  }

  /**
   * The count after adding {@code delta} permits, checked before anything changes: a count is an
   * int, and one that wrapped around would turn a huge number of permits negative.
   *
   * @throws IllegalArgumentException if the count would leave the range of an int
   */
  private static int countAfter(String kind, String name, int count, int delta) {
    long after = (long) count + delta;
    if (after != (int) after) {
      throw new IllegalArgumentException(
          "adding "
              + delta
              + " permits to the "
              + count
              + " of "
              + kind
              + " '"
              + name
              + "' would take its count out of the range of an int ["
              + Integer.MIN_VALUE
              + ", "
              + Integer.MAX_VALUE
              + "]; nothing was changed");
    }
    return (int) after;
  }

  synchronized boolean tryAcquirePermits(String name, int permits) {
    int available = semaphores.getOrDefault(name, 0);
    if (available < permits) {
      return false;
    }
    semaphores.put(name, available - permits);
    return true;
  }

  synchronized int availablePermits(String name) {
    return semaphores.getOrDefault(name, 0);
  }

  void setPermits(String name, int permits) {
    Runnable wakeup;
    synchronized (this) {
      semaphores.put(name, permits);
      wakeup = permits > 0 ? publish(ResourceType.SEMAPHORE, name, Wakeup.of(permits)) : () -> {};
    }
    wakeup.run();
  }

  synchronized int drainPermits(String name) {
    int available = semaphores.getOrDefault(name, 0);
    if (available <= 0) {
      return 0;
    }
    semaphores.put(name, 0);
    return available;
  }

  boolean addPermitsIfExists(String name, int delta) {
    Runnable wakeup;
    synchronized (this) {
      if (!semaphores.containsKey(name)) {
        return false;
      }
      wakeup = changePermits(name, delta);
    }
    wakeup.run();
    return true;
  }

  synchronized boolean deleteSemaphore(String name) {
    return semaphores.remove(name) != null;
  }

  synchronized boolean semaphoreExists(String name) {
    return semaphores.containsKey(name);
  }

  synchronized Optional<SemaphoreInfo> inspectSemaphore(String name) {
    Integer available = semaphores.get(name);
    return available == null ? Optional.empty() : Optional.of(new SemaphoreInfo(name, available));
  }

  synchronized List<SemaphoreInfo> listSemaphores() {
    List<SemaphoreInfo> result = new ArrayList<>();
    new TreeMap<>(semaphores)
        .forEach((name, available) -> result.add(new SemaphoreInfo(name, available)));
    return result;
  }

  // ---- leased semaphores ----

  synchronized boolean trySetLeasedPermits(String name, int permits) {
    PermitPool pool = permitPools.computeIfAbsent(name, n -> new PermitPool());
    if (pool.total != null) {
      return false;
    }
    pool.total = permits;
    return true;
  }

  void addLeasedPermits(String name, int delta) {
    Runnable wakeup;
    synchronized (this) {
      PermitPool pool = permitPools.computeIfAbsent(name, n -> new PermitPool());
      pool.total = countAfter("leased semaphore", name, pool.total == null ? 0 : pool.total, delta);
      wakeup =
          delta > 0 ? publish(ResourceType.LEASED_SEMAPHORE, name, Wakeup.of(delta)) : () -> {};
    }
    wakeup.run();
  }

  synchronized AcquireResult tryAcquirePermit(
      String name, String permitId, long leaseMillis, String clientId) {
    return tryAcquirePermits(name, List.of(permitId), leaseMillis, clientId);
  }

  /**
   * Grants all of {@code permitIds} with one token if that many are free, else none. Ids granted
   * already are one attempt asked again (its answer was lost): they are extended, never shortened.
   */
  synchronized AcquireResult tryAcquirePermits(
      String name, List<String> permitIds, long leaseMillis, String clientId) {
    long now = now();
    PermitPool pool = permitPools.computeIfAbsent(name, n -> new PermitPool());
    pool.purge(now);
    Permit existing = pool.granted.get(permitIds.get(0));
    if (existing != null) {
      for (String permitId : permitIds) {
        Permit again = pool.granted.get(permitId);
        if (again != null) {
          again.extendTo(now + leaseMillis);
        }
      }
      return AcquireResult.granted(existing.token, permitIds.size());
    }
    if (pool.free() < permitIds.size()) {
      long earliest = -1;
      for (Permit permit : pool.granted.values()) {
        long left = permit.expiresAt - now;
        earliest = earliest < 0 ? left : Math.min(earliest, left);
      }
      return AcquireResult.busy(earliest);
    }
    long token = ++pool.fence;
    for (String permitId : permitIds) {
      pool.granted.put(permitId, new Permit(token, now + leaseMillis, clientId));
    }
    return AcquireResult.granted(token, permitIds.size());
  }

  boolean releasePermit(String name, String permitId) {
    return releasePermits(name, List.of(permitId));
  }

  /** Frees all of {@code permitIds} if every one is held, else none. */
  boolean releasePermits(String name, List<String> permitIds) {
    Runnable wakeup;
    synchronized (this) {
      PermitPool pool = permitPools.get(name);
      if (pool == null) {
        return false;
      }
      pool.purge(now());
      if (!pool.granted.keySet().containsAll(permitIds)) {
        return false;
      }
      pool.granted.keySet().removeAll(permitIds);
      wakeup = publish(ResourceType.LEASED_SEMAPHORE, name, Wakeup.of(permitIds.size()));
    }
    wakeup.run();
    return true;
  }

  synchronized boolean updatePermitLease(String name, String permitId, long leaseMillis) {
    PermitPool pool = permitPools.get(name);
    if (pool == null) {
      return false;
    }
    long now = now();
    pool.purge(now);
    Permit permit = pool.granted.get(permitId);
    if (permit == null) {
      return false;
    }
    permit.expiresAt = now + leaseMillis;
    return true;
  }

  synchronized int availableLeasedPermits(String name) {
    PermitPool pool = permitPools.get(name);
    if (pool == null) {
      return 0;
    }
    pool.purge(now());
    return pool.free();
  }

  /** Forgets the total and every permit, but keeps the fencing counter so that tokens grow. */
  synchronized boolean deleteLeasedSemaphore(String name) {
    PermitPool pool = permitPools.get(name);
    if (pool == null) {
      return false;
    }
    pool.purge(now());
    boolean existed = pool.total != null || !pool.granted.isEmpty();
    pool.total = null;
    pool.granted.clear();
    return existed;
  }

  synchronized boolean leasedSemaphoreExists(String name) {
    PermitPool pool = permitPools.get(name);
    return pool != null && pool.total != null;
  }

  synchronized Optional<LeasedSemaphoreInfo> inspectLeasedSemaphore(String name) {
    PermitPool pool = permitPools.get(name);
    if (pool == null || pool.total == null) {
      return Optional.empty();
    }
    long now = now();
    pool.purge(now);
    return Optional.of(pool.info(name, now));
  }

  synchronized List<LeasedSemaphoreInfo> listLeasedSemaphores() {
    long now = now();
    List<LeasedSemaphoreInfo> result = new ArrayList<>();
    for (Map.Entry<String, PermitPool> entry : new TreeMap<>(permitPools).entrySet()) {
      PermitPool pool = entry.getValue();
      if (pool.total != null) {
        pool.purge(now);
        result.add(pool.info(entry.getKey(), now));
      }
    }
    return result;
  }

  // ---- latches ----

  synchronized boolean trySetCount(String name, long count) {
    if (latches.getOrDefault(name, 0L) > 0) {
      return false;
    }
    latches.put(name, count);
    return true;
  }

  long countDown(String name) {
    Runnable wakeup = () -> {};
    long left;
    synchronized (this) {
      long count = latches.getOrDefault(name, 0L);
      if (count == 0) {
        return 0;
      }
      left = count - 1;
      if (left == 0) {
        latches.remove(name);
        wakeup = publish(ResourceType.COUNT_DOWN_LATCH, name, Wakeup.of(Wakeup.ALL));
      } else {
        latches.put(name, left);
      }
    }
    wakeup.run();
    return left;
  }

  synchronized long count(String name) {
    return latches.getOrDefault(name, 0L);
  }

  boolean deleteLatch(String name) {
    Runnable wakeup;
    synchronized (this) {
      if (latches.remove(name) == null) {
        return false;
      }
      wakeup = publish(ResourceType.COUNT_DOWN_LATCH, name, Wakeup.of(Wakeup.ALL));
    }
    wakeup.run();
    return true;
  }

  synchronized Optional<LatchInfo> inspectLatch(String name) {
    Long count = latches.get(name);
    return count == null ? Optional.empty() : Optional.of(new LatchInfo(name, count));
  }

  synchronized List<LatchInfo> listLatches() {
    List<LatchInfo> result = new ArrayList<>();
    new TreeMap<>(latches).forEach((name, count) -> result.add(new LatchInfo(name, count)));
    return result;
  }

  // ---- wake-ups ----

  Runnable subscribe(ResourceType type, String name, Consumer<Wakeup> listener) {
    Channel channel = new Channel(type, name);
    subscribers.computeIfAbsent(channel, c -> new CopyOnWriteArrayList<>()).add(listener);
    return () ->
        subscribers.computeIfPresent(
            channel,
            (c, listeners) -> {
              listeners.remove(listener);
              return listeners.isEmpty() ? null : listeners;
            });
  }

  /** Returns the delivery, to run once the monitor is released. */
  private Runnable publish(ResourceType type, String name, Wakeup wakeup) {
    List<Consumer<Wakeup>> listeners = subscribers.get(new Channel(type, name));
    if (listeners == null || listeners.isEmpty()) {
      return () -> {};
    }
    List<Consumer<Wakeup>> snapshot = List.copyOf(listeners);
    return () -> {
      if (!closed) {
        dispatcher.execute(() -> snapshot.forEach(listener -> listener.accept(wakeup)));
      }
    };
  }

  // ---- records ----

  private record Channel(ResourceType type, String name) {}

  private record Presence(ClientInfo client, long expiresAt) {}

  /** A waiter's place in a lock's queue: the mode it waits for, and when the place ends. */
  private record QueuePlace(LockMode mode, long deadline) {}

  private interface Leased {
    long token();

    void extendTo(long deadline);
  }

  private static final class Holder implements Leased {
    final String clientId;
    final long token;
    int shared;
    int exclusive;
    long expiresAt;

    Holder(String clientId, long token) {
      this.clientId = clientId;
      this.token = token;
    }

    @Override
    public long token() {
      return token;
    }

    @Override
    public void extendTo(long deadline) {
      expiresAt = Math.max(expiresAt, deadline);
    }
  }

  private static final class LockRecord {
    final Map<String, Holder> holders = new LinkedHashMap<>();

    /** Waiters in arrival order, each with the mode it asked for and the deadline of its place. */
    final LinkedHashMap<String, QueuePlace> queue = new LinkedHashMap<>();

    /**
     * The owner whose hand-off is pending (woken at {@link #wokenAt}, not come yet), or null; see
     * {@link LockRequest}.
     */
    @Nullable String wokenOwner;

    long wokenAt;

    void purge(long now) {
      holders.values().removeIf(holder -> holder.expiresAt <= now);
      queue.values().removeIf(place -> place.deadline() <= now);
    }

    /**
     * How long until the place of the first writer queued ahead of this owner (anywhere in the
     * queue, if the owner is not queued) ends, or -1 if no writer is ahead. Call after purge.
     */
    long writerAheadPlaceEnds(String owner, long now) {
      for (Map.Entry<String, QueuePlace> entry : queue.entrySet()) {
        if (entry.getKey().equals(owner)) {
          return -1;
        }
        if (entry.getValue().mode() == LockMode.EXCLUSIVE) {
          return entry.getValue().deadline() - now;
        }
      }
      return -1;
    }

    /** The mode a queued owner asked for, or null if it is not queued. */
    @Nullable LockMode queuedMode(String owner) {
      QueuePlace place = queue.get(owner);
      return place == null ? null : place.mode();
    }

    @Nullable String queueHead() {
      Iterator<String> it = queue.keySet().iterator();
      return it.hasNext() ? it.next() : null;
    }

    LockInfo info(String name, long now) {
      List<HolderInfo> infos = new ArrayList<>();
      for (Map.Entry<String, Holder> entry : holders.entrySet()) {
        Holder holder = entry.getValue();
        Duration left = Duration.ofMillis(Math.max(0, holder.expiresAt - now));
        if (holder.exclusive > 0) {
          infos.add(
              new HolderInfo(
                  entry.getKey(),
                  holder.clientId,
                  LockMode.EXCLUSIVE,
                  holder.exclusive,
                  left,
                  holder.token));
        }
        if (holder.shared > 0) {
          infos.add(
              new HolderInfo(
                  entry.getKey(),
                  holder.clientId,
                  LockMode.SHARED,
                  holder.shared,
                  left,
                  holder.token));
        }
      }
      return new LockInfo(name, infos, queue.size());
    }
  }

  private static final class Permit implements Leased {
    final long token;
    final String clientId;
    long expiresAt;

    Permit(long token, long expiresAt, String clientId) {
      this.token = token;
      this.expiresAt = expiresAt;
      this.clientId = clientId;
    }

    @Override
    public long token() {
      return token;
    }

    @Override
    public void extendTo(long deadline) {
      expiresAt = Math.max(expiresAt, deadline);
    }
  }

  private static final class PermitPool {
    @Nullable Integer total;
    long fence;
    final Map<String, Permit> granted = new LinkedHashMap<>();

    void purge(long now) {
      granted.values().removeIf(permit -> permit.expiresAt <= now);
    }

    int free() {
      return (total == null ? 0 : total) - granted.size();
    }

    LeasedSemaphoreInfo info(String name, long now) {
      List<PermitInfo> permits = new ArrayList<>();
      granted.forEach(
          (id, permit) ->
              permits.add(
                  new PermitInfo(
                      id,
                      permit.clientId,
                      Duration.ofMillis(Math.max(0, permit.expiresAt - now)),
                      permit.token)));
      return new LeasedSemaphoreInfo(name, total == null ? 0 : total, permits);
    }
  }
}
