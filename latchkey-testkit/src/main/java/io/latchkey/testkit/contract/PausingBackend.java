package io.latchkey.testkit.contract;

import io.latchkey.LockMode;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendFactory;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.RenewResult;
import io.latchkey.spi.WakeupBus;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The fixture's real backend as seen by a process that can be paused, as by SIGSTOP or a long GC
 * pause: while paused, no lock operation and no renewal reaches the server (each call's stage never
 * completes, as a call that never left a stopped process), and wake-ups are not delivered. The
 * server keeps whatever the process had set up before: its holds, its queue places. Resuming lets
 * later calls and wake-ups through again; what was lost while paused stays lost, as it would.
 */
final class PausingBackend extends ForwardingBackend {
  private final AtomicBoolean paused;
  private final LockStore locks;

  private PausingBackend(LatchkeyBackend delegate, AtomicBoolean paused) {
    super(delegate);
    this.paused = paused;
    this.locks = new PausingLocks(delegate.locks());
  }

  /**
   * @param real opens the fixture's backend
   * @param paused set to pause every backend opened through the factory, cleared to resume
   * @return opens the real backend behind the switch
   */
  static BackendFactory pausable(BackendFactory real, AtomicBoolean paused) {
    return context -> new PausingBackend(real.open(context), paused);
  }

  private <T> CompletionStage<T> unlessPaused(Supplier<CompletionStage<T>> call) {
    return paused.get() ? new CompletableFuture<>() : call.get();
  }

  @Override
  public LockStore locks() {
    return locks;
  }

  @Override
  public WakeupBus wakeups() {
    return (type, name, listener) ->
        delegate
            .wakeups()
            .subscribe(
                type,
                name,
                wakeup -> {
                  if (!paused.get()) {
                    listener.accept(wakeup);
                  }
                });
  }

  @Override
  public CompletionStage<RenewResult> renew(Collection<GrantRef> grants, long leaseMillis) {
    return unlessPaused(() -> delegate.renew(grants, leaseMillis));
  }

  private final class PausingLocks implements LockStore {
    private final LockStore real;

    PausingLocks(LockStore real) {
      this.real = real;
    }

    @Override
    public CompletionStage<AcquireResult> tryAcquire(LockRequest request) {
      return unlessPaused(() -> real.tryAcquire(request));
    }

    @Override
    public CompletionStage<ReleaseResult> release(GrantRef grant, LockMode mode) {
      return unlessPaused(() -> real.release(grant, mode));
    }

    @Override
    public CompletionStage<Void> leaveQueue(String name, String owner) {
      return unlessPaused(() -> real.leaveQueue(name, owner));
    }

    @Override
    public CompletionStage<Integer> requestRevocation(String name) {
      return unlessPaused(() -> real.requestRevocation(name));
    }
  }
}
