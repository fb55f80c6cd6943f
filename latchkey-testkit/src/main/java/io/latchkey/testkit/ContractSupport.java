package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.spi.BackendFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Base of every suite of the kit: the fixture, clients opened on it (closed after each test),
 * unique resource names, and the short timings the suites use.
 *
 * <p>Default test options: a 2 s watchdog lease renewed every 500 ms, 2 s operation timeout, 200 ms
 * re-check. Suites that test expiry use explicit lease times of a few hundred milliseconds and
 * Awaitility, never fixed sleeps.
 */
@ExtendWith(FeatureCondition.class)
public abstract class ContractSupport {
  private static final AtomicLong NAMES = new AtomicLong();

  private final List<Latchkey> clients = new ArrayList<>();
  private final List<ExecutorService> executors = new ArrayList<>();
  private @Nullable Latchkey client;

  /**
   * @return the backend under test
   */
  protected abstract BackendFixture fixture();

  /**
   * @return the options the kit's clients use unless a test says otherwise
   */
  protected static LatchkeyOptions.Builder testOptions() {
    return LatchkeyOptions.builder()
        .leaseTime(Duration.ofSeconds(2))
        .renewInterval(Duration.ofMillis(500))
        .operationTimeout(Duration.ofSeconds(2))
        .recheckInterval(Duration.ofMillis(200))
        .queueKeepAlive(Duration.ofSeconds(1))
        .closeOnShutdown(false);
  }

  /**
   * @return the test's first client, opened on first use
   */
  protected Latchkey client() {
    if (client == null) {
      client = newClient();
    }
    return client;
  }

  /**
   * @return a new client on its own connection: to the backend, another process
   */
  protected Latchkey newClient() {
    return newClient(UnaryOperator.identity());
  }

  /**
   * @param options changes to {@link #testOptions()}
   * @return a new client with those options
   */
  protected Latchkey newClient(UnaryOperator<LatchkeyOptions.Builder> options) {
    return newClient(UnaryOperator.identity(), options);
  }

  /**
   * @param backend wraps the fixture's backend, e.g. to pause the new client like a stopped process
   * @param options changes to {@link #testOptions()}
   * @return a new client on the wrapped backend with those options
   */
  protected Latchkey newClient(
      UnaryOperator<BackendFactory> backend, UnaryOperator<LatchkeyOptions.Builder> options) {
    Latchkey opened =
        Latchkey.using(backend.apply(fixture().backend()), options.apply(testOptions()).build());
    synchronized (clients) {
      clients.add(opened);
    }
    return opened;
  }

  /** A call that re-enters, in another client, a grant made for the same owner token. */
  @FunctionalInterface
  protected interface Reentry<T> {
    /**
     * @return what the re-entry gave
     * @throws InterruptedException if the waiting thread was interrupted
     */
    T reenter() throws InterruptedException;
  }

  /**
   * Re-enters, in another client, a grant that an owner token took in this one. A backend that
   * declares {@link Feature#REMOTE_OWNER_TOKENS} must re-enter. One without it may, or may refuse
   * at once with {@link UnsupportedFeatureException} naming that feature (a quorum: the grant's
   * fencing token lives in the client that made it, so another client cannot hand out the grant's
   * token); the caller then checks that the refusal left the caller's grant alone.
   *
   * @param reentry the re-entry in the other client
   * @return what the re-entry gave, or empty if the backend refused it
   * @throws InterruptedException if the waiting thread was interrupted
   */
  protected <T> Optional<T> reenterElsewhere(Reentry<T> reentry) throws InterruptedException {
    if (fixture().features().contains(Feature.REMOTE_OWNER_TOKENS)) {
      return Optional.of(reentry.reenter());
    }
    try {
      return Optional.of(reentry.reenter());
    } catch (UnsupportedFeatureException refused) {
      assertThat(refused.feature()).isEqualTo(Feature.REMOTE_OWNER_TOKENS);
      return Optional.empty();
    }
  }

  /**
   * @param hint a readable part
   * @return a resource name no other test uses
   */
  protected static String uniqueName(String hint) {
    return "kit/" + hint + "/" + System.nanoTime() + "-" + NAMES.incrementAndGet();
  }

  /**
   * @param threads the pool size
   * @return a pool shut down after the test
   */
  protected ExecutorService executor(int threads) {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    executors.add(pool);
    return pool;
  }

  /** Closes every client and pool the test opened. */
  @AfterEach
  void closeClientsAndPools() throws InterruptedException {
    for (ExecutorService pool : executors) {
      pool.shutdownNow();
      pool.awaitTermination(10, TimeUnit.SECONDS);
    }
    executors.clear();
    synchronized (clients) {
      for (Latchkey opened : clients) {
        opened.close();
      }
      clients.clear();
    }
    client = null;
  }
}
