package io.latchkey.testkit.contract;

import io.latchkey.Feature;
import io.latchkey.spi.AdminStore;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.LatchStore;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.RenewResult;
import io.latchkey.spi.SemaphoreStore;
import io.latchkey.spi.WakeupBus;
import java.util.Collection;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * A backend that forwards every operation to the fixture's real backend; the kit's wrappers
 * (features hidden, a paused process) override only what they change.
 */
abstract class ForwardingBackend implements LatchkeyBackend {
  final LatchkeyBackend delegate;

  ForwardingBackend(LatchkeyBackend delegate) {
    this.delegate = delegate;
  }

  @Override
  public String description() {
    return delegate.description();
  }

  @Override
  public String identity() {
    return delegate.identity();
  }

  @Override
  public Set<Feature> features() {
    return delegate.features();
  }

  @Override
  public Optional<String> missingFeatureReason(Feature feature) {
    return delegate.missingFeatureReason(feature);
  }

  @Override
  public LockStore locks() {
    return delegate.locks();
  }

  @Override
  public SemaphoreStore semaphores() {
    return delegate.semaphores();
  }

  @Override
  public LeasedSemaphoreStore leasedSemaphores() {
    return delegate.leasedSemaphores();
  }

  @Override
  public LatchStore latches() {
    return delegate.latches();
  }

  @Override
  public AdminStore admin() {
    return delegate.admin();
  }

  @Override
  public WakeupBus wakeups() {
    return delegate.wakeups();
  }

  @Override
  public CompletionStage<WakeupBus.Subscription> subscribeRevocations(Consumer<GrantRef> listener) {
    return delegate.subscribeRevocations(listener);
  }

  @Override
  public String renewalShard(GrantRef grant) {
    return delegate.renewalShard(grant);
  }

  @Override
  public CompletionStage<RenewResult> renew(Collection<GrantRef> grants, long leaseMillis) {
    return delegate.renew(grants, leaseMillis);
  }

  @Override
  public void close() {
    delegate.close();
  }
}
