package io.latchkey.testkit.contract;

import io.latchkey.Feature;
import io.latchkey.spi.AdminStore;
import io.latchkey.spi.BackendFactory;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.LatchStore;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.RenewResult;
import io.latchkey.spi.SemaphoreStore;
import io.latchkey.spi.WakeupBus;
import java.util.Collection;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * The fixture's real backend with some features hidden from the engine, so that the kit can check
 * the engine's behaviour without them (refusals, polling instead of push wake-ups) on every
 * backend, including those that have them. Every operation goes to the real backend.
 */
final class FeatureHidingBackend implements LatchkeyBackend {
  private final LatchkeyBackend delegate;
  private final Set<Feature> hidden;

  private FeatureHidingBackend(LatchkeyBackend delegate, Set<Feature> hidden) {
    this.delegate = delegate;
    this.hidden = hidden;
  }

  /**
   * @param real opens the fixture's backend
   * @param hidden what the engine must not see
   * @return opens the real backend behind a mask
   */
  static BackendFactory hiding(BackendFactory real, Set<Feature> hidden) {
    Set<Feature> copy = hidden.isEmpty() ? EnumSet.noneOf(Feature.class) : EnumSet.copyOf(hidden);
    return context -> new FeatureHidingBackend(real.open(context), copy);
  }

  @Override
  public String description() {
    return delegate.description();
  }

  @Override
  public Set<Feature> features() {
    Set<Feature> shown = EnumSet.noneOf(Feature.class);
    shown.addAll(delegate.features());
    shown.removeAll(hidden);
    return shown;
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
  public WakeupBus wakeups() {
    return hidden.contains(Feature.WAKEUP_PUSH) ? WakeupBus.NONE : delegate.wakeups();
  }

  @Override
  public CompletionStage<RenewResult> renew(Collection<GrantRef> grants, long leaseMillis) {
    return delegate.renew(grants, leaseMillis);
  }

  @Override
  public AdminStore admin() {
    return delegate.admin();
  }

  @Override
  public String identity() {
    return delegate.identity();
  }

  @Override
  public void close() {
    delegate.close();
  }
}
