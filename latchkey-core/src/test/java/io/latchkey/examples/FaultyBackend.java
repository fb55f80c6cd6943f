package io.latchkey.examples;

import io.latchkey.ClientInfo;
import io.latchkey.Feature;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.memory.MemoryLockServer;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.AdminStore;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.BackendFactory;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.LatchStore;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.RenewResult;
import io.latchkey.spi.SemaphoreStore;
import io.latchkey.spi.WakeupBus;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * Test support for the error examples, not an example itself: the in-memory backend with fewer
 * features, or with lock operations (and lease renewal) that hang or fail while {@link #fault} says
 * so. It stands in for a lock service that is down or unreachable.
 */
final class FaultyBackend implements BackendFactory {
  /** What the lock operations do. */
  enum Fault {
    /** Answer normally. */
    NONE,
    /** Never answer, like a server behind a dropped network link. */
    HANG,
    /** Fail at once, like a refused connection. */
    FAIL
  }

  private final MemoryLockServer server = new MemoryLockServer();
  private final Set<Feature> features;
  private volatile Fault fault = Fault.NONE;

  FaultyBackend(Set<Feature> features) {
    this.features = Set.copyOf(features);
  }

  FaultyBackend() {
    this(EnumSet.allOf(Feature.class));
  }

  void fault(Fault fault) {
    this.fault = fault;
  }

  @Override
  public LatchkeyBackend open(BackendContext context) {
    return new Connection(server.backend().open(context));
  }

  private <T> CompletionStage<T> apply(Supplier<CompletionStage<T>> operation) {
    return switch (fault) {
      case NONE -> operation.get();
      case HANG -> new CompletableFuture<>();
      case FAIL ->
          CompletableFuture.failedFuture(
              new UncheckedIOException(new ConnectException("connection refused")));
    };
  }

  private final class Connection implements LatchkeyBackend, LockStore, AdminStore {
    private final LatchkeyBackend memory;

    Connection(LatchkeyBackend memory) {
      this.memory = memory;
    }

    @Override
    public String description() {
      return "faulty-memory";
    }

    @Override
    public Set<Feature> features() {
      return features;
    }

    @Override
    public LockStore locks() {
      return this;
    }

    @Override
    public SemaphoreStore semaphores() {
      return memory.semaphores();
    }

    @Override
    public LeasedSemaphoreStore leasedSemaphores() {
      return memory.leasedSemaphores();
    }

    @Override
    public LatchStore latches() {
      return memory.latches();
    }

    @Override
    public AdminStore admin() {
      return this;
    }

    @Override
    public WakeupBus wakeups() {
      return features.contains(Feature.WAKEUP_PUSH) ? memory.wakeups() : WakeupBus.NONE;
    }

    @Override
    public CompletionStage<RenewResult> renew(Collection<GrantRef> grants, long leaseMillis) {
      return apply(() -> memory.renew(grants, leaseMillis));
    }

    @Override
    public void close() {
      memory.close();
    }

    @Override
    public CompletionStage<AcquireResult> tryAcquire(LockRequest request) {
      return apply(() -> memory.locks().tryAcquire(request));
    }

    @Override
    public CompletionStage<ReleaseResult> release(GrantRef grant, LockMode mode) {
      return apply(() -> memory.locks().release(grant, mode));
    }

    @Override
    public CompletionStage<Void> leaveQueue(String name, String owner) {
      return apply(() -> memory.locks().leaveQueue(name, owner));
    }

    @Override
    public CompletionStage<Boolean> forceRelease(String name) {
      return apply(() -> memory.admin().forceRelease(name));
    }

    @Override
    public CompletionStage<Boolean> evict(String name, String owner) {
      return apply(() -> memory.admin().evict(name, owner));
    }

    @Override
    public CompletionStage<List<ClientInfo>> clients() {
      return apply(() -> memory.admin().clients());
    }

    @Override
    public CompletionStage<Optional<LockInfo>> inspect(String name) {
      return apply(() -> memory.admin().inspect(name));
    }

    @Override
    public CompletionStage<List<LockInfo>> list() {
      return apply(() -> memory.admin().list());
    }

    @Override
    public CompletionStage<Void> heartbeat(ClientInfo self, long timeToLiveMillis) {
      return apply(() -> memory.admin().heartbeat(self, timeToLiveMillis));
    }

    @Override
    public CompletionStage<Void> leave(String clientId) {
      return apply(() -> memory.admin().leave(clientId));
    }
  }
}
