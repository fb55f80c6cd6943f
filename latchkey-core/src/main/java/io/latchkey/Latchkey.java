package io.latchkey;

import io.latchkey.internal.BackendRegistry;
import io.latchkey.internal.LatchkeyClient;
import io.latchkey.spi.BackendFactory;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;

/**
 * A latchkey client: one connection to one lock service, one client id, one watchdog. Thread-safe;
 * create one per process and backend, and close it on shutdown, which releases every lock and
 * permit it still holds.
 *
 * <pre>{@code
 * try (Latchkey latchkey = Latchkey.connect("memory:")) {
 *   DistributedLock lock = latchkey.lock("orders/42");
 *   try (Lease lease = lock.acquire(Duration.ofSeconds(3))) {
 *     store.write(order, lease.fencingToken());
 *   }
 * }
 * }</pre>
 *
 * <p>Handles returned by the factory methods are cheap views: ask for them as often as needed.
 * Names are validated: not blank, at most {@value #MAX_NAME_LENGTH} characters, no control
 * characters.
 */
public interface Latchkey extends AutoCloseable {
  /** The longest resource name accepted. */
  int MAX_NAME_LENGTH = 255;

  /**
   * Connects with default options.
   *
   * @param uri a backend URI, e.g. {@code redis://localhost:6379} or {@code memory:}
   * @return the client
   * @throws IllegalArgumentException if the URI is malformed or no backend on the class path takes
   *     its scheme
   * @throws BackendUnavailableException if the backend cannot be reached
   */
  static Latchkey connect(String uri) {
    return connect(uri, LatchkeyOptions.defaults());
  }

  /**
   * Connects with the given options.
   *
   * @param uri a backend URI
   * @param options the client's settings
   * @return the client
   * @throws IllegalArgumentException if the URI is malformed or no backend takes its scheme
   * @throws BackendUnavailableException if the backend cannot be reached
   */
  static Latchkey connect(String uri, LatchkeyOptions options) {
    Objects.requireNonNull(uri, "uri must not be null");
    Objects.requireNonNull(options, "options must not be null");
    return LatchkeyClient.open(BackendRegistry.factoryFor(uri), options);
  }

  /**
   * Uses a backend built in code instead of a URI.
   *
   * @param backend opens the backend for the new client
   * @param options the client's settings
   * @return the client
   */
  static Latchkey using(BackendFactory backend, LatchkeyOptions options) {
    Objects.requireNonNull(backend, "backend must not be null");
    Objects.requireNonNull(options, "options must not be null");
    return LatchkeyClient.open(backend, options);
  }

  /**
   * @return this client's random id (128 bits, hex)
   */
  String clientId();

  /**
   * @return a description of the backend, without secrets
   */
  String backendDescription();

  /**
   * @return the optional features of the backend
   */
  Set<Feature> features();

  /**
   * @return the client's settings
   */
  LatchkeyOptions options();

  /**
   * @param name the lock name
   * @return a reentrant lock
   */
  DistributedLock lock(String name);

  /**
   * @param name the lock name
   * @return a reentrant lock whose waiters are served first come, first served
   * @throws UnsupportedFeatureException without {@link Feature#FAIR_LOCK}
   */
  DistributedLock fairLock(String name);

  /**
   * @param name the mutex name
   * @return a non-reentrant mutex
   */
  DistributedMutex mutex(String name);

  /**
   * @param name the lock name
   * @return a read-write lock
   * @throws UnsupportedFeatureException without {@link Feature#READ_WRITE_LOCK}
   */
  DistributedReadWriteLock readWriteLock(String name);

  /**
   * @param name the semaphore name
   * @return a counting semaphore
   * @throws UnsupportedFeatureException without {@link Feature#SEMAPHORE}
   */
  DistributedSemaphore semaphore(String name);

  /**
   * @param name the semaphore name
   * @return a semaphore with leased permits
   * @throws UnsupportedFeatureException without {@link Feature#LEASED_SEMAPHORE}
   */
  LeasedSemaphore leasedSemaphore(String name);

  /**
   * @param name the latch name
   * @return a count-down latch
   * @throws UnsupportedFeatureException without {@link Feature#COUNT_DOWN_LATCH}
   */
  DistributedCountDownLatch countDownLatch(String name);

  /**
   * @param locks the members; may come from different clients and backends
   * @return a lock that holds all of them or none
   */
  default MultiLock multiLock(DistributedLock... locks) {
    return MultiLock.of(locks);
  }

  /**
   * Joins the leader election of {@code name} as a new participant, which competes at once (see
   * {@link LeaderElection}). Every call is another participant; close it to leave.
   *
   * @param name the election's name, which is also the name of its lock
   * @param listener hears this participant's terms, on the callback executor
   * @return the participant
   */
  LeaderElection joinElection(String name, LeadershipListener listener);

  /**
   * Joins the leader election of {@code name} without a listener: ask {@link
   * LeaderElection#isLeader()} or wait with {@link LeaderElection#awaitLeadership(Duration)}.
   *
   * @param name the election's name, which is also the name of its lock
   * @return the participant
   */
  default LeaderElection joinElection(String name) {
    return joinElection(name, new LeadershipListener() {});
  }

  /**
   * @return the monitor's view of the backend
   */
  LockAdmin admin();

  /**
   * @return a new explicit owner to hand to other threads or processes
   */
  default OwnerToken newOwnerToken() {
    return OwnerToken.random();
  }

  /**
   * Stops the watchdog, releases every lock hold and leased permit this client still has (plain
   * semaphore permits have no owner and stay taken; each release is bounded by the operation
   * timeout), and closes the backend. Idempotent.
   */
  @Override
  void close();
}
