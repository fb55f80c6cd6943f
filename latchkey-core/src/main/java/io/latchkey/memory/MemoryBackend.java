package io.latchkey.memory;

import io.latchkey.ClientInfo;
import io.latchkey.Feature;
import io.latchkey.LatchInfo;
import io.latchkey.LeasedSemaphoreInfo;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.SemaphoreInfo;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.AdminStore;
import io.latchkey.spi.FenceStore;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HandOverResult;
import io.latchkey.spi.LatchStore;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.RenewResult;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.SemaphoreStore;
import io.latchkey.spi.Wakeup;
import io.latchkey.spi.WakeupBus;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One client's connection to a {@link MemoryLockServer}. Answers synchronously with completed
 * stages; after {@link #close()} every call fails as a closed connection would.
 */
final class MemoryBackend
    implements LatchkeyBackend,
        LockStore,
        SemaphoreStore,
        LatchStore,
        AdminStore,
        WakeupBus,
        FenceStore {
  private final MemoryLockServer server;
  private final String clientId;
  private final Set<Runnable> subscriptions = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  MemoryBackend(MemoryLockServer server, String clientId) {
    this.server = server;
    this.clientId = clientId;
  }

  private <T> CompletionStage<T> answer(Supplier<T> operation) {
    if (closed) {
      return CompletableFuture.failedFuture(
          new IllegalStateException("the in-memory backend connection is closed"));
    }
    if (server.isClosed()) {
      return CompletableFuture.failedFuture(
          new IllegalStateException("the in-memory server " + server.description() + " is closed"));
    }
    return CompletableFuture.completedFuture(operation.get());
  }

  @Override
  public String description() {
    return server.description();
  }

  /**
   * Everything a lease-record service has; its holds are not bound to a connection, and waiting is
   * by pushed wake-ups, not watches.
   */
  @Override
  public Set<Feature> features() {
    return FEATURES;
  }

  static final Set<Feature> FEATURES =
      Set.copyOf(
          EnumSet.complementOf(EnumSet.of(Feature.CONNECTION_BOUND_HOLDS, Feature.WAKEUP_WATCH)));

  @Override
  public LockStore locks() {
    return this;
  }

  @Override
  public SemaphoreStore semaphores() {
    return this;
  }

  @Override
  public LeasedSemaphoreStore leasedSemaphores() {
    return leasedView;
  }

  @Override
  public LatchStore latches() {
    return this;
  }

  @Override
  public AdminStore admin() {
    return this;
  }

  @Override
  public WakeupBus wakeups() {
    return this;
  }

  @Override
  public Optional<FenceStore> fences() {
    return Optional.of(this);
  }

  @Override
  public CompletionStage<Long> raiseLockFence(String name, long atLeast) {
    return answer(() -> server.raiseLockFence(name, atLeast));
  }

  @Override
  public CompletionStage<Epoch> epoch(long atLeast, long quarantineMillis) {
    return answer(() -> server.epoch(atLeast, quarantineMillis));
  }

  @Override
  public CompletionStage<RenewResult> renew(Collection<GrantRef> grants, long leaseMillis) {
    return answer(() -> RenewResult.gone(server.renew(grants, leaseMillis)));
  }

  @Override
  public void close() {
    closed = true;
    subscriptions.forEach(Runnable::run);
    subscriptions.clear();
  }

  // ---- LockStore ----

  @Override
  public CompletionStage<AcquireResult> tryAcquire(LockRequest request) {
    return answer(() -> server.tryAcquire(request, clientId));
  }

  @Override
  public CompletionStage<ReleaseResult> release(GrantRef grant, LockMode mode) {
    return answer(() -> server.release(grant, mode));
  }

  @Override
  public boolean handsOver() {
    return true;
  }

  @Override
  public CompletionStage<HandOverResult> releaseAndHandOver(
      GrantRef grant, LockMode mode, LockRequest next) {
    return answer(() -> server.releaseAndHandOver(grant, mode, next, clientId));
  }

  @Override
  public CompletionStage<Void> leaveQueue(String name, String owner) {
    return answer(
        () -> {
          server.leaveQueue(name, owner);
          return null;
        });
  }

  @Override
  public CompletionStage<Integer> requestRevocation(String name) {
    return answer(() -> server.requestRevocation(name));
  }

  @Override
  public CompletionStage<Subscription> subscribeRevocations(Consumer<GrantRef> listener) {
    return answer(() -> track(server.subscribeRevocations(clientId, listener)));
  }

  @Override
  public CompletionStage<Boolean> evict(String name, String owner) {
    return answer(() -> server.evict(name, owner));
  }

  // ---- AdminStore ----

  @Override
  public CompletionStage<List<ClientInfo>> clients() {
    return answer(server::clients);
  }

  @Override
  public CompletionStage<Void> heartbeat(ClientInfo self, long timeToLiveMillis) {
    return answer(
        () -> {
          server.heartbeat(self, timeToLiveMillis);
          return null;
        });
  }

  @Override
  public CompletionStage<Void> leave(String clientId) {
    return answer(
        () -> {
          server.left(clientId);
          return null;
        });
  }

  @Override
  public CompletionStage<Boolean> forceRelease(String name) {
    return answer(() -> server.forceRelease(name));
  }

  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    return answer(() -> server.inspect(name));
  }

  @Override
  public CompletionStage<List<LockInfo>> list() {
    return answer(server::list);
  }

  @Override
  public CompletionStage<Optional<SemaphoreInfo>> inspectSemaphore(String name) {
    return answer(() -> server.inspectSemaphore(name));
  }

  @Override
  public CompletionStage<Optional<LeasedSemaphoreInfo>> inspectLeasedSemaphore(String name) {
    return answer(() -> server.inspectLeasedSemaphore(name));
  }

  @Override
  public CompletionStage<Optional<LatchInfo>> inspectLatch(String name) {
    return answer(() -> server.inspectLatch(name));
  }

  @Override
  public CompletionStage<List<SemaphoreInfo>> listSemaphores() {
    return answer(server::listSemaphores);
  }

  @Override
  public CompletionStage<List<LeasedSemaphoreInfo>> listLeasedSemaphores() {
    return answer(server::listLeasedSemaphores);
  }

  @Override
  public CompletionStage<List<LatchInfo>> listLatches() {
    return answer(server::listLatches);
  }

  // ---- SemaphoreStore ----

  @Override
  public CompletionStage<Boolean> trySetPermits(String name, int permits) {
    return answer(() -> server.trySetPermits(name, permits));
  }

  @Override
  public CompletionStage<Void> addPermits(String name, int delta) {
    return answer(
        () -> {
          server.addPermits(name, delta);
          return null;
        });
  }

  @Override
  public CompletionStage<Boolean> tryAcquire(String name, int permits) {
    return answer(() -> server.tryAcquirePermits(name, permits));
  }

  @Override
  public CompletionStage<Integer> availablePermits(String name) {
    return answer(() -> server.availablePermits(name));
  }

  @Override
  public CompletionStage<Void> setPermits(String name, int permits) {
    return answer(
        () -> {
          server.setPermits(name, permits);
          return null;
        });
  }

  @Override
  public CompletionStage<Integer> drainPermits(String name) {
    return answer(() -> server.drainPermits(name));
  }

  @Override
  public CompletionStage<Boolean> addPermitsIfExists(String name, int delta) {
    return answer(() -> server.addPermitsIfExists(name, delta));
  }

  @Override
  public CompletionStage<Boolean> delete(String name) {
    return answer(() -> server.deleteSemaphore(name));
  }

  @Override
  public CompletionStage<Boolean> exists(String name) {
    return answer(() -> server.semaphoreExists(name));
  }

  // ---- LeasedSemaphoreStore (its method names clash with SemaphoreStore's) ----

  private final LeasedSemaphoreStore leasedView =
      new LeasedSemaphoreStore() {
        @Override
        public CompletionStage<Boolean> trySetPermits(String name, int permits) {
          return answer(() -> server.trySetLeasedPermits(name, permits));
        }

        @Override
        public CompletionStage<Void> addPermits(String name, int delta) {
          return answer(
              () -> {
                server.addLeasedPermits(name, delta);
                return null;
              });
        }

        @Override
        public CompletionStage<AcquireResult> tryAcquire(
            String name, String permitId, long leaseMillis) {
          return answer(() -> server.tryAcquirePermit(name, permitId, leaseMillis, clientId));
        }

        @Override
        public CompletionStage<Boolean> release(String name, String permitId) {
          return answer(() -> server.releasePermit(name, permitId));
        }

        @Override
        public CompletionStage<Integer> availablePermits(String name) {
          return answer(() -> server.availableLeasedPermits(name));
        }

        @Override
        public CompletionStage<AcquireResult> tryAcquireAll(
            String name, List<String> permitIds, long leaseMillis) {
          return answer(() -> server.tryAcquirePermits(name, permitIds, leaseMillis, clientId));
        }

        @Override
        public CompletionStage<Boolean> releaseAll(String name, List<String> permitIds) {
          return answer(() -> server.releasePermits(name, permitIds));
        }

        @Override
        public CompletionStage<Boolean> updateLease(
            String name, String permitId, long leaseMillis) {
          return answer(() -> server.updatePermitLease(name, permitId, leaseMillis));
        }

        @Override
        public CompletionStage<Boolean> delete(String name) {
          return answer(() -> server.deleteLeasedSemaphore(name));
        }

        @Override
        public CompletionStage<Boolean> exists(String name) {
          return answer(() -> server.leasedSemaphoreExists(name));
        }
      };

  // ---- LatchStore ----

  @Override
  public CompletionStage<Boolean> trySetCount(String name, long count) {
    return answer(() -> server.trySetCount(name, count));
  }

  @Override
  public CompletionStage<Long> countDown(String name) {
    return answer(() -> server.countDown(name));
  }

  @Override
  public CompletionStage<Long> count(String name) {
    return answer(() -> server.count(name));
  }

  @Override
  public CompletionStage<Boolean> deleteLatch(String name) {
    return answer(() -> server.deleteLatch(name));
  }

  // ---- WakeupBus ----

  @Override
  public CompletionStage<Subscription> subscribe(
      ResourceType type, String name, Consumer<Wakeup> listener) {
    return answer(() -> track(server.subscribe(type, name, listener)));
  }

  /** A subscription that this connection also cancels when it closes. */
  private Subscription track(Runnable cancel) {
    subscriptions.add(cancel);
    return () -> {
      if (subscriptions.remove(cancel)) {
        cancel.run();
      }
      return CompletableFuture.completedFuture(null);
    };
  }
}
