package io.latchkey.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LockTimeoutException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The meters after a known sequence of operations, on one backend: the subclasses say which. Every
 * test uses a client of its own and fresh registries, so each count is exact.
 */
abstract class MetricsScenario {
  private final MeterRegistry meters = new SimpleMeterRegistry();
  private final ObservationRegistry observations = ObservationRegistry.create();
  private final List<Observation.Context> started = new CopyOnWriteArrayList<>();
  private final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();
  private final ExecutorService otherThread = Executors.newSingleThreadExecutor();
  private Latchkey latchkey;

  /** The backend URI of the clients. */
  abstract String uri();

  /** The value of the {@code backend} tag for that URI. */
  abstract String backendTag();

  @BeforeEach
  void connect() {
    observations
        .observationConfig()
        .observationHandler(
            new ObservationHandler<>() {
              @Override
              public boolean supportsContext(Observation.Context context) {
                return true;
              }

              @Override
              public void onStart(Observation.Context context) {
                started.add(context);
              }

              @Override
              public void onStop(Observation.Context context) {
                stopped.add(context);
              }
            });
    latchkey = Latchkey.connect(uri(), options(Duration.ofSeconds(30)));
  }

  LatchkeyOptions options(Duration leaseTime) {
    return LatchkeyOptions.builder()
        .leaseTime(leaseTime)
        .closeOnShutdown(false)
        .observer(LatchkeyMetrics.builder(meters).observations(observations).build())
        .build();
  }

  @AfterEach
  void close() {
    otherThread.shutdownNow();
    latchkey.close();
  }

  @Test
  void grantsTimeoutsWaitsAndHeldLocksAreCounted() throws Exception {
    String name = "metrics/" + System.nanoTime();
    DistributedLock lock = latchkey.lock(name);
    Lease outer = lock.acquire(Duration.ofSeconds(5));
    Lease inner = lock.acquire(Duration.ofSeconds(5)); // re-entry: a second hold
    assertThat(gauge("lock")).isEqualTo(2);

    // Another thread (another owner): one try that does not wait, one wait that runs out.
    assertThat(onOtherThread(() -> lock.tryAcquire().isPresent()).get()).isFalse();
    Future<Object> waited =
        onOtherThread(
            () -> {
              try {
                return lock.acquire(Duration.ofMillis(200));
              } catch (LockTimeoutException expected) {
                return expected;
              }
            });
    assertThat(waited.get()).isInstanceOf(LockTimeoutException.class);

    inner.release();
    outer.release();
    assertThat(gauge("lock")).isZero();

    // Now the other thread gets it at once.
    onOtherThread(() -> lock.acquire(Duration.ofSeconds(5))).get().release();
    latchkey.mutex(name + "/mutex").acquire(Duration.ofSeconds(5)).release();

    assertThat(count(LatchkeyMetrics.GRANTS, "lock")).isEqualTo(3);
    assertThat(count(LatchkeyMetrics.GRANTS, "mutex")).isEqualTo(1);
    assertThat(count(LatchkeyMetrics.TIMEOUTS, "lock")).isEqualTo(2);
    assertThat(timerCount(LatchkeyMetrics.ACQUIRE, "lock", "granted")).isEqualTo(3);
    assertThat(timerCount(LatchkeyMetrics.ACQUIRE, "lock", "timeout")).isEqualTo(2);
    // Only the acquisition that waited, and timed out, has a wait time.
    assertThat(timerCount(LatchkeyMetrics.WAIT, "lock", "timeout")).isEqualTo(1);
    assertThat(
            meters
                .get(LatchkeyMetrics.WAIT)
                .tag("outcome", "timeout")
                .timer()
                .totalTime(TimeUnit.MILLISECONDS))
        .isGreaterThanOrEqualTo(150);
    assertThat(meters.find(LatchkeyMetrics.WAIT).tag("outcome", "granted").timer()).isNull();
    // No lock names among the tags.
    assertThat(meters.getMeters())
        .flatMap(meter -> meter.getId().getTags())
        .noneMatch(tag -> tag.getValue().contains(name));

    assertThat(started).hasSize(6);
    assertThat(stopped).containsExactlyInAnyOrderElementsOf(started);
    assertThat(stopped)
        .allSatisfy(context -> assertThat(context.getName()).isEqualTo(LatchkeyMetrics.OBSERVATION))
        .filteredOn(context -> "true".equals(value(context, "waited")))
        .singleElement()
        .satisfies(
            context -> {
              assertThat(value(context, "outcome")).isEqualTo("timeout");
              assertThat(value(context, "primitive")).isEqualTo("lock");
              assertThat(
                      Objects.requireNonNull(context.getHighCardinalityKeyValue("latchkey.name"))
                          .getValue())
                  .isEqualTo(name);
            });
  }

  @Test
  void renewalsAndALeaseThatRanOutAreCounted() throws Exception {
    reconnect(Duration.ofMillis(600));
    String name = "metrics/" + System.nanoTime();
    Lease watched = latchkey.lock(name).acquire(Duration.ofSeconds(5));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> count(LatchkeyMetrics.RENEWALS, "lock") >= 2);
    watched.release();

    Lease shortLease =
        latchkey.fairLock(name + "/fair").acquire(Duration.ofSeconds(5), Duration.ofMillis(100));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> count(LatchkeyMetrics.LEASES_LOST, "fair_lock") == 1);
    assertThat(gauge("fair_lock")).isEqualTo(1); // lost, but not given back yet
    assertThatThrownBy(shortLease::release).isInstanceOf(LeaseLostException.class);
    assertThat(gauge("fair_lock")).isZero();
    assertThat(count(LatchkeyMetrics.LEASES_LOST, "lock")).isZero();
    assertThat(count(LatchkeyMetrics.RENEWAL_FAILURES, "lock")).isZero();
  }

  private static @Nullable String value(Observation.Context context, String key) {
    var keyValue = context.getLowCardinalityKeyValue(key);
    return keyValue == null ? null : keyValue.getValue();
  }

  /** Replaces the client by one whose watchdog lease is {@code leaseTime}. */
  void reconnect(Duration leaseTime) {
    latchkey.close();
    latchkey = Latchkey.connect(uri(), options(leaseTime));
  }

  <T> Future<T> onOtherThread(java.util.concurrent.Callable<T> task) {
    return otherThread.submit(task);
  }

  double gauge(String primitive) {
    var gauge =
        meters
            .find(LatchkeyMetrics.HELD)
            .tag("primitive", primitive)
            .tag("backend", backendTag())
            .gauge();
    return gauge == null ? 0 : gauge.value();
  }

  double count(String counter, String primitive) {
    var found =
        meters.find(counter).tag("primitive", primitive).tag("backend", backendTag()).counter();
    return found == null ? 0 : found.count();
  }

  long timerCount(String timer, String primitive, String outcome) {
    var found =
        meters
            .find(timer)
            .tag("primitive", primitive)
            .tag("backend", backendTag())
            .tag("outcome", outcome)
            .timer();
    return found == null ? 0 : found.count();
  }

  Latchkey latchkey() {
    return latchkey;
  }
}
