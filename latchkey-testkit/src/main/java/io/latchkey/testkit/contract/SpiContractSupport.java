package io.latchkey.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Feature;
import io.latchkey.HolderInfo;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.Wakeup;
import io.latchkey.spi.WakeupBus;
import io.latchkey.testkit.ContractSupport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;

/**
 * Base of the SPI suites: they open the fixture's backend directly, without an engine, call the SPI
 * and read the backend's state back through its own probes ({@code AdminStore.inspect}, available
 * permits, latch counts, wake-up subscriptions), so that a backend author sees the wrong answer
 * itself rather than an engine that times out.
 *
 * <p>Each backend opened here is one client (its own connection and client id) and is closed after
 * the test. Owners are plain strings: the SPI does not care how the engine builds them. Leases are
 * {@link #LONG_LEASE} (never runs out during a test), or {@link #SHORT_LEASE} and {@link
 * #BRIEF_LEASE} for expiry; time-dependent checks wait with Awaitility, never with sleeps.
 */
abstract class SpiContractSupport extends ContractSupport {
  /** A lease that does not run out while a test runs. */
  static final long LONG_LEASE = 30_000;

  /**
   * A lease that runs out soon, for expiry checks where nothing needs the grant alive after the
   * call that made it.
   */
  static final long SHORT_LEASE = 300;

  /**
   * A lease that runs out within the test but outlives the next few calls even on a slow, busy
   * machine: for checks that need the grant alive first and gone later, or alive and short.
   */
  static final long BRIEF_LEASE = 1_000;

  /** A queue place that lives as long as the test. */
  static final long KEEP_QUEUED = 30_000;

  /**
   * How much a remaining lease read after an answer may exceed the time the answer gave: the two
   * are read at different moments of one clock, so only rounding separates them.
   */
  static final long CLOCK_MARGIN = 50;

  /** How long a test listens for a wake-up that must not come. */
  static final Duration QUIET = Duration.ofMillis(500);

  private final List<LatchkeyBackend> backends = new ArrayList<>();
  private final List<WakeupBus.Subscription> subscriptions = new ArrayList<>();

  /**
   * @return a backend opened on its own connection with a new client id, closed after the test
   */
  LatchkeyBackend open() {
    BackendContext context =
        new BackendContext(
            "spi-kit-" + UUID.randomUUID(), Duration.ofSeconds(2), Duration.ofSeconds(2));
    LatchkeyBackend backend = fixture().backend().open(context);
    backends.add(backend);
    return backend;
  }

  /** Unsubscribes and closes what the test opened. */
  @AfterEach
  void closeBackends() {
    for (WakeupBus.Subscription subscription : subscriptions) {
      join(subscription.unsubscribe());
    }
    subscriptions.clear();
    for (LatchkeyBackend backend : backends) {
      backend.close();
    }
    backends.clear();
  }

  /**
   * @param feature an optional feature
   * @return whether the fixture declares it, for probes that only some backends offer
   */
  boolean has(Feature feature) {
    return fixture().features().contains(feature);
  }

  /**
   * @return whether inspect shows leases that the backend keeps by its clock ({@link Feature#ADMIN}
   *     and {@link Feature#LEASE_TIME}); a backend whose holds live as long as a session has no
   *     lease deadline to show
   */
  boolean leasesVisible() {
    return has(Feature.ADMIN) && has(Feature.LEASE_TIME);
  }

  /**
   * Waits for a backend's answer, bounded so that a stage that never completes fails the test.
   *
   * @param stage the backend's stage
   * @return its value
   */
  static <T> T join(CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().get(Awaiting.PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new AssertionError("the backend failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new AssertionError("the backend did not answer within " + Awaiting.PATIENCE, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  /**
   * @param hint a readable part
   * @return an owner id no other test uses
   */
  static String owner(String hint) {
    return hint + "-" + UUID.randomUUID();
  }

  /** An unfair request that does not queue. */
  static LockRequest request(String name, String owner, LockMode mode, long leaseMillis) {
    return new LockRequest(name, owner, mode, leaseMillis, false, 0);
  }

  /** An exclusive, unfair request with a long lease that does not queue. */
  static LockRequest exclusive(String name, String owner) {
    return request(name, owner, LockMode.EXCLUSIVE, LONG_LEASE);
  }

  /** A shared, unfair request with a long lease that does not queue. */
  static LockRequest shared(String name, String owner) {
    return request(name, owner, LockMode.SHARED, LONG_LEASE);
  }

  /** An exclusive request with a long lease that queues for {@link #KEEP_QUEUED} if refused. */
  static LockRequest queued(String name, String owner, boolean fair) {
    return queued(name, owner, LockMode.EXCLUSIVE, fair);
  }

  /** A request with a long lease that queues for {@link #KEEP_QUEUED} if refused. */
  static LockRequest queued(String name, String owner, LockMode mode, boolean fair) {
    return new LockRequest(name, owner, mode, LONG_LEASE, fair, KEEP_QUEUED);
  }

  /** A hand-off that does not run out while a test runs. */
  static final long LONG_HANDOFF = 30_000;

  /**
   * An exclusive request with a long lease that queues for {@link #KEEP_QUEUED} if refused and
   * counts a woken owner's hand-off as missed after {@code handoffMillis}.
   */
  static LockRequest handingOff(String name, String owner, boolean fair, long handoffMillis) {
    return handingOff(name, owner, LockMode.EXCLUSIVE, fair, handoffMillis);
  }

  /** Like {@link #handingOff(String, String, boolean, long)}, in a given mode. */
  static LockRequest handingOff(
      String name, String owner, LockMode mode, boolean fair, long handoffMillis) {
    return new LockRequest(name, owner, mode, LONG_LEASE, fair, KEEP_QUEUED, handoffMillis);
  }

  /** The grant of a lock owner with a given token. */
  static GrantRef lockGrant(String name, String owner, long token) {
    return new GrantRef(new HolderRef(ResourceType.LOCK, name, owner), token);
  }

  /** The grant of a leased permit with a given token. */
  static GrantRef permitGrant(String name, String permitId, long token) {
    return new GrantRef(new HolderRef(ResourceType.LEASED_SEMAPHORE, name, permitId), token);
  }

  /**
   * @return the answer, checked to be a grant
   */
  static AcquireResult granted(AcquireResult result) {
    assertThat(result.status()).as("status of %s", result).isEqualTo(AcquireResult.Status.GRANTED);
    assertThat(result.fencingToken()).as("fencing token of %s", result).isPositive();
    return result;
  }

  /**
   * Checks a refusal. Its hint is -1 or a positive time, never 0 (waiters would spin); when the
   * backend keeps leases by its clock ({@link Feature#LEASE_TIME}) and a holder is in the way, it
   * is positive and within the lease asked for.
   *
   * @param result the answer
   * @param holderLease the lease of the holder in the way, or 0 if nobody holds the resource
   * @return the answer
   */
  AcquireResult busy(AcquireResult result, long holderLease) {
    assertThat(result.status()).as("status of %s", result).isEqualTo(AcquireResult.Status.BUSY);
    long retryAfter = result.retryAfterMillis();
    assertThat(retryAfter == -1 || retryAfter > 0)
        .as("retryAfterMillis of %s is -1 or positive", result)
        .isTrue();
    if (holderLease > 0) {
      if (has(Feature.LEASE_TIME)) {
        assertThat(retryAfter)
            .as("retryAfterMillis of %s with a holder whose lease is %d ms", result, holderLease)
            .isPositive();
      }
      assertThat(retryAfter)
          .as("retryAfterMillis of %s: no more than the holder's lease", result)
          .isLessThanOrEqualTo(holderLease + CLOCK_MARGIN);
    }
    return result;
  }

  /**
   * @return the answer to one attempt on the lock record, checked to be a grant
   */
  static AcquireResult acquired(LatchkeyBackend backend, LockRequest request) {
    return granted(join(backend.locks().tryAcquire(request)));
  }

  /**
   * @param holderLease the lease of the holder in the way, or 0 if nobody holds the lock
   * @return the answer to one attempt on the lock record, checked to be a refusal ({@link #busy})
   */
  AcquireResult refused(LatchkeyBackend backend, LockRequest request, long holderLease) {
    return busy(join(backend.locks().tryAcquire(request)), holderLease);
  }

  /**
   * @return the answer to the release of one hold of the lock grant {@code (owner, token)}
   */
  static ReleaseResult release(
      LatchkeyBackend backend, String name, String owner, long token, LockMode mode) {
    return join(backend.locks().release(lockGrant(name, owner, token), mode));
  }

  /**
   * @return the lock's record, or empty if nobody holds it; needs {@link Feature#ADMIN}
   */
  static Optional<LockInfo> inspect(LatchkeyBackend backend, String name) {
    return join(backend.admin().inspect(name));
  }

  /**
   * @return the holder entries of one owner (one per mode it holds); needs {@link Feature#ADMIN}
   */
  static List<HolderInfo> holdings(LatchkeyBackend backend, String name, String owner) {
    return inspect(backend, name).map(LockInfo::holders).orElse(List.of()).stream()
        .filter(holder -> holder.owner().equals(owner))
        .toList();
  }

  /**
   * @return the one holder entry of an owner that holds in one mode; needs {@link Feature#ADMIN}
   */
  static HolderInfo holder(LatchkeyBackend backend, String name, String owner) {
    List<HolderInfo> found = holdings(backend, name, owner);
    assertThat(found).as("holder entries of %s on %s", owner, name).hasSize(1);
    return found.get(0);
  }

  /**
   * @return the queue length inspect reports; needs {@link Feature#ADMIN} and a holder (a free lock
   *     inspects as empty)
   */
  static int queuedWaiters(LatchkeyBackend backend, String name) {
    return inspect(backend, name)
        .orElseThrow(() -> new AssertionError(name + " has no holder to inspect its queue"))
        .queuedWaiters();
  }

  /**
   * Subscribes to a resource's wake-ups, unsubscribed after the test.
   *
   * @return the wake-ups in the order they arrive
   */
  Wakeups subscribe(LatchkeyBackend backend, ResourceType type, String name) {
    Wakeups received = new Wakeups();
    subscriptions.add(join(backend.wakeups().subscribe(type, name, received.queue::add)));
    return received;
  }

  /** Wake-ups received by one subscription. */
  static final class Wakeups {
    private final BlockingQueue<Wakeup> queue = new LinkedBlockingQueue<>();

    /**
     * @return the next wake-up, failing the test if none arrives within {@link Awaiting#PATIENCE}
     */
    Wakeup next() {
      Wakeup wakeup = poll(Awaiting.PATIENCE);
      if (wakeup == null) {
        throw new AssertionError("no wake-up within " + Awaiting.PATIENCE);
      }
      return wakeup;
    }

    /**
     * @return whether a wake-up has arrived and is waiting to be read, without waiting
     */
    boolean arrived() {
      return !queue.isEmpty();
    }

    /**
     * @param timeout how long to wait
     * @return the next wake-up, or null if none arrives within {@code timeout}
     */
    @Nullable Wakeup within(Duration timeout) {
      return poll(timeout);
    }

    /** Checks that nothing arrives within {@link #QUIET}. */
    void assertNoneArrives() {
      assertThat(poll(QUIET)).as("a wake-up that nobody needs").isNull();
    }

    private @Nullable Wakeup poll(Duration timeout) {
      try {
        return queue.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted", e);
      }
    }
  }
}
