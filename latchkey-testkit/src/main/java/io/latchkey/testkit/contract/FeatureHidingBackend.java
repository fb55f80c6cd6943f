package io.latchkey.testkit.contract;

import io.latchkey.Feature;
import io.latchkey.spi.BackendFactory;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.WakeupBus;
import java.util.EnumSet;
import java.util.Set;

/**
 * The fixture's real backend with some features hidden from the engine, so that the kit can check
 * the engine's behaviour without them (refusals, polling instead of push wake-ups) on every
 * backend, including those that have them. Every operation goes to the real backend.
 */
final class FeatureHidingBackend extends ForwardingBackend {
  private final Set<Feature> hidden;

  private FeatureHidingBackend(LatchkeyBackend delegate, Set<Feature> hidden) {
    super(delegate);
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
  public Set<Feature> features() {
    Set<Feature> shown = EnumSet.noneOf(Feature.class);
    shown.addAll(delegate.features());
    shown.removeAll(hidden);
    return shown;
  }

  @Override
  public WakeupBus wakeups() {
    return hidden.contains(Feature.WAKEUP_PUSH) ? WakeupBus.NONE : delegate.wakeups();
  }
}
