package io.latchkey.micrometer;

import io.latchkey.LatchkeyObserver;
import io.latchkey.Primitive;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Records what latchkey clients do as Micrometer meters, and optionally each acquisition as a
 * Micrometer {@link Observation} so that traces show lock waits. Hand it to the client's options:
 *
 * <pre>{@code
 * LatchkeyOptions options = LatchkeyOptions.builder()
 *     .observer(LatchkeyMetrics.builder(meterRegistry).observations(observationRegistry).build())
 *     .build();
 * try (Latchkey latchkey = Latchkey.connect("redis://localhost:6379", options)) { ... }
 * }</pre>
 *
 * <p>Meters; every one is tagged {@code primitive} ({@link Primitive#tagValue()}, e.g. {@code
 * lock}, {@code fair_lock}, {@code read_lock}) and {@code backend} (the backend URI's scheme, e.g.
 * {@code redis}), never by lock name, which would make one time series per name:
 *
 * <ul>
 *   <li>{@value #ACQUIRE} (timer, also tagged {@code outcome}: {@code granted}, {@code timeout} or
 *       {@code failed}): how long each acquisition took, waits included;
 *   <li>{@value #WAIT} (timer, also tagged {@code outcome}): for the acquisitions that found the
 *       resource taken, how long they waited from then on;
 *   <li>{@value #GRANTS}, {@value #TIMEOUTS}, {@value #FAILURES} (counters): acquisitions by
 *       outcome;
 *   <li>{@value #LEASES_LOST} (counter): leases lost (not renewed in time, forgotten by the
 *       backend, force-released);
 *   <li>{@value #RENEWALS} and {@value #RENEWAL_FAILURES} (counters): leases the watchdog renewed,
 *       or could not renew;
 *   <li>{@value #HELD} (gauge): holds the clients currently have (a reentrant lock taken twice
 *       counts twice, a leased permit once).
 * </ul>
 *
 * <p>With {@link Builder#observations(ObservationRegistry)}, each acquisition is also an
 * observation named {@value #OBSERVATION}, started on the caller's thread (so the caller's current
 * observation is its parent), with the low-cardinality keys {@code primitive}, {@code backend},
 * {@code outcome} and {@code waited}, the high-cardinality key {@code latchkey.name} (the lock's
 * name: for traces, not for metrics), and an event {@code waiting} when it starts to wait. Like
 * every {@link LatchkeyObserver}, its handlers run on latchkey's threads and must not block;
 * tracing and meter handlers do not.
 *
 * <p>One instance may serve any number of clients; it is thread-safe.
 */
public final class LatchkeyMetrics implements LatchkeyObserver {
  /** The acquire latency timer. */
  public static final String ACQUIRE = "latchkey.acquire";

  /** The wait time timer. */
  public static final String WAIT = "latchkey.acquire.wait";

  /** The counter of granted acquisitions. */
  public static final String GRANTS = "latchkey.grants";

  /** The counter of acquisitions whose wait ran out. */
  public static final String TIMEOUTS = "latchkey.timeouts";

  /** The counter of acquisitions that failed (backend error, cancellation). */
  public static final String FAILURES = "latchkey.acquire.failures";

  /** The counter of lost leases. */
  public static final String LEASES_LOST = "latchkey.leases.lost";

  /** The counter of renewed leases. */
  public static final String RENEWALS = "latchkey.renewals";

  /** The counter of leases whose renewal failed. */
  public static final String RENEWAL_FAILURES = "latchkey.renewal.failures";

  /** The gauge of holds. */
  public static final String HELD = "latchkey.held";

  /** The name of the observation of an acquisition. */
  public static final String OBSERVATION = "latchkey.acquisition";

  private final MeterRegistry registry;
  private final ObservationRegistry observations;
  private final ConcurrentMap<Tags, AtomicLong> held = new ConcurrentHashMap<>();

  private LatchkeyMetrics(Builder builder) {
    this.registry = builder.registry;
    this.observations = builder.observations;
  }

  /**
   * @param registry where the meters go
   * @return a builder of metrics without observations
   */
  public static Builder builder(MeterRegistry registry) {
    return new Builder(registry);
  }

  /**
   * @param registry where the meters go
   * @return metrics without observations
   */
  public static LatchkeyMetrics of(MeterRegistry registry) {
    return builder(registry).build();
  }

  @Override
  public AcquireObservation acquireStarted(Primitive primitive, String backend, String name) {
    Tags tags = tags(primitive, backend);
    Observation observation =
        observations.isNoop()
            ? Observation.NOOP
            : Observation.createNotStarted(OBSERVATION, observations)
                .lowCardinalityKeyValue("primitive", primitive.tagValue())
                .lowCardinalityKeyValue("backend", backend)
                .highCardinalityKeyValue("latchkey.name", name)
                .start();
    return new Acquisition(tags, observation, registry.config().clock().monotonicTime());
  }

  @Override
  public void holdsChanged(Primitive primitive, String backend, int delta) {
    held.computeIfAbsent(tags(primitive, backend), this::heldGauge).addAndGet(delta);
  }

  private AtomicLong heldGauge(Tags tags) {
    AtomicLong count = new AtomicLong();
    Gauge.builder(HELD, count, AtomicLong::get)
        .description("lock holds and leased permits this process has")
        .tags(tags)
        .register(registry);
    return count;
  }

  @Override
  public void leaseLost(Primitive primitive, String backend) {
    counter(LEASES_LOST, tags(primitive, backend)).increment();
  }

  @Override
  public void renewed(Primitive primitive, String backend, int leases) {
    counter(RENEWALS, tags(primitive, backend)).increment(leases);
  }

  @Override
  public void renewalFailed(Primitive primitive, String backend, int leases) {
    counter(RENEWAL_FAILURES, tags(primitive, backend)).increment(leases);
  }

  private Counter counter(String name, Tags tags) {
    return Counter.builder(name).tags(tags).register(registry);
  }

  private static Tags tags(Primitive primitive, String backend) {
    return Tags.of("primitive", primitive.tagValue(), "backend", backend);
  }

  @Override
  public String toString() {
    return "LatchkeyMetrics[" + registry.getClass().getSimpleName() + "]";
  }

  /** One acquisition: its start, when it began to wait, and its observation. */
  private final class Acquisition implements AcquireObservation {
    private final Tags tags;
    private final Observation observation;
    private final long startedAt;
    private volatile long waitingSince = -1;

    Acquisition(Tags tags, Observation observation, long startedAt) {
      this.tags = tags;
      this.observation = observation;
      this.startedAt = startedAt;
    }

    @Override
    public void waiting() {
      waitingSince = registry.config().clock().monotonicTime();
      observation.event(Observation.Event.of("waiting"));
    }

    @Override
    public void granted() {
      end("granted", GRANTS);
    }

    @Override
    public void timedOut() {
      end("timeout", TIMEOUTS);
    }

    @Override
    public void failed(Throwable failure) {
      observation.error(failure);
      end("failed", FAILURES);
    }

    private void end(String outcome, String counter) {
      long now = registry.config().clock().monotonicTime();
      Tags withOutcome = tags.and("outcome", outcome);
      Timer.builder(ACQUIRE)
          .description("how long acquisitions took, waits included")
          .tags(withOutcome)
          .register(registry)
          .record(now - startedAt, TimeUnit.NANOSECONDS);
      long since = waitingSince;
      if (since >= 0) {
        Timer.builder(WAIT)
            .description("how long acquisitions that found the resource taken waited")
            .tags(withOutcome)
            .register(registry)
            .record(now - since, TimeUnit.NANOSECONDS);
      }
      counter(counter, tags).increment();
      observation
          .lowCardinalityKeyValue("outcome", outcome)
          .lowCardinalityKeyValue("waited", Boolean.toString(since >= 0))
          .stop();
    }
  }

  /** Builds {@link LatchkeyMetrics}. */
  public static final class Builder {
    private final MeterRegistry registry;
    private ObservationRegistry observations = ObservationRegistry.NOOP;

    private Builder(MeterRegistry registry) {
      this.registry = Objects.requireNonNull(registry, "registry must not be null");
    }

    /**
     * Also observes each acquisition (for traces); its handlers must not block.
     *
     * @param registry the observation registry
     * @return this
     */
    public Builder observations(ObservationRegistry registry) {
      this.observations = Objects.requireNonNull(registry, "registry must not be null");
      return this;
    }

    /**
     * @return the metrics, to pass to {@link io.latchkey.LatchkeyOptions.Builder#observer}
     */
    public LatchkeyMetrics build() {
      return new LatchkeyMetrics(this);
    }
  }
}
