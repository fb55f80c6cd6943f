package io.latchkey.internal;

import io.latchkey.LatchkeyObserver;
import io.latchkey.LatchkeyObserver.AcquireObservation;
import io.latchkey.Primitive;
import java.util.Locale;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's side of the {@link LatchkeyObserver} of one client: it adds the backend's kind to
 * every event and makes sure that an observer that throws changes nothing but a log line. With the
 * default {@link LatchkeyObserver#NONE} every method returns at once.
 */
final class Observing {
  private static final Logger LOG = LoggerFactory.getLogger(Observing.class);

  private final LatchkeyObserver observer;
  private final boolean enabled;
  private final String backend;

  Observing(LatchkeyObserver observer, String backendDescription) {
    this.observer = observer;
    this.enabled = observer != LatchkeyObserver.NONE;
    this.backend = backendKind(backendDescription);
  }

  /** The scheme of a backend's description, e.g. {@code redis} of {@code redis://host:6379}. */
  static String backendKind(String description) {
    int colon = description.indexOf(':');
    String scheme = colon > 0 ? description.substring(0, colon) : description;
    return scheme.toLowerCase(Locale.ROOT);
  }

  AcquireObservation acquireStarted(Primitive primitive, String name) {
    if (!enabled) {
      return AcquireObservation.NONE;
    }
    AcquireObservation[] started = {AcquireObservation.NONE};
    run(o -> started[0] = o.acquireStarted(primitive, backend, name));
    AcquireObservation observation = started[0];
    return observation == AcquireObservation.NONE ? observation : new Guarded(observation);
  }

  void holdsChanged(Primitive primitive, int delta) {
    if (enabled) {
      run(o -> o.holdsChanged(primitive, backend, delta));
    }
  }

  void leaseLost(Primitive primitive) {
    if (enabled) {
      run(o -> o.leaseLost(primitive, backend));
    }
  }

  void renewed(Primitive primitive, int leases) {
    if (enabled && leases > 0) {
      run(o -> o.renewed(primitive, backend, leases));
    }
  }

  void renewalFailed(Primitive primitive, int leases) {
    if (enabled && leases > 0) {
      run(o -> o.renewalFailed(primitive, backend, leases));
    }
  }

  private void run(Consumer<LatchkeyObserver> event) {
    guarded(() -> event.accept(observer));
  }

  private static void guarded(Runnable event) {
    try {
      event.run();
    } catch (RuntimeException e) {
      LOG.warn("a latchkey observer failed; the operation goes on", e);
    }
  }

  /** An acquisition's observation whose exceptions are logged, not thrown into the engine. */
  private static final class Guarded implements AcquireObservation {
    private final AcquireObservation target;

    Guarded(AcquireObservation target) {
      this.target = target;
    }

    @Override
    public void waiting() {
      guarded(target::waiting);
    }

    @Override
    public void granted() {
      guarded(target::granted);
    }

    @Override
    public void timedOut() {
      guarded(target::timedOut);
    }

    @Override
    public void failed(Throwable failure) {
      guarded(() -> target.failed(failure));
    }
  }
}
