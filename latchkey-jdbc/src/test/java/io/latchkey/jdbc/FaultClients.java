package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.latchkey.BackendUnavailableException;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyObserver;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.servers.FreezableTcpProxy;
import io.latchkey.servers.SqlTestServer;
import io.latchkey.testkit.WatchdogTally;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.jspecify.annotations.Nullable;

/**
 * What the fault and error tests of latchkey-jdbc share: clients with short leases and timeouts
 * that count the watchdog's renewals, the "within the bound" check, and the servers' clean-up.
 */
final class FaultClients {
  /**
   * What a failing call may take beyond the operation timeout: the engine's timer and a thread
   * switch on a loaded machine, never a hang.
   */
  static final Duration SLACK = Duration.ofSeconds(3);

  /** The operation timeout of every client here. */
  static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(1);

  private static final AtomicLong NAMES = new AtomicLong();

  private FaultClients() {}

  /**
   * @param prefix what the test is about
   * @return a lock name no other test uses
   */
  static String uniqueName(String prefix) {
    return "faults/" + prefix + "/" + NAMES.incrementAndGet();
  }

  /**
   * @param uri the latchkey URI
   * @param lease the watchdog's lease (renewed every sixth of it)
   * @param observer hears the client's renewals
   * @return a client whose operations time out after {@link #OPERATION_TIMEOUT}
   */
  static Latchkey connect(String uri, Duration lease, LatchkeyObserver observer) {
    return Latchkey.connect(
        uri,
        LatchkeyOptions.builder()
            .leaseTime(lease)
            .renewInterval(lease.dividedBy(6))
            .operationTimeout(OPERATION_TIMEOUT)
            .recheckInterval(Duration.ofMillis(100))
            .closeOnShutdown(false)
            .observer(observer)
            .build());
  }

  /**
   * @param uri the latchkey URI
   * @return a client with a 3 s watchdog lease
   */
  static Latchkey connect(String uri) {
    return connect(uri, Duration.ofSeconds(3), LatchkeyObserver.NONE);
  }

  /**
   * Checks that {@code call} fails with {@code type} within {@code bound} plus {@link #SLACK}.
   *
   * @return the failure, for more checks
   */
  static Throwable failsWithinBound(
      Duration bound, Class<? extends Throwable> type, ThrowingCallable call) {
    long start = System.nanoTime();
    Throwable failure = catchThrowable(call);
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    assertThat(failure).as("the call should have failed").isInstanceOf(type);
    assertThat(took).as("how long the failing call took").isLessThan(bound.plus(SLACK));
    return failure;
  }

  /**
   * Checks that {@code call} fails with {@link BackendUnavailableException} (or its subclass {@link
   * io.latchkey.BackendTimeoutException}) within the operation timeout plus {@link #SLACK}.
   */
  static Throwable unavailableWithinBound(ThrowingCallable call) {
    return failsWithinBound(OPERATION_TIMEOUT, BackendUnavailableException.class, call);
  }

  /**
   * @param lease a lease
   * @return completes when the lease is reported lost
   */
  static CompletableFuture<LeaseLostException> lossOf(Lease lease) {
    CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    lease.onLost(lost::complete);
    return lost;
  }

  /**
   * A connection-bound hold (advisory or row mode) through a fault that ends its connection: the
   * holder is told of the loss, its release says so, another client gets the lock with a larger
   * token, and the holder takes it again on a new connection.
   *
   * @param uri the mode's URI
   * @param lease the holder's watchdog lease
   * @param name the lock's name
   * @param fault what ends the connection (a restart of the server)
   */
  static void assertConnectionBoundLossAcross(
      String uri, Duration lease, String name, ThrowingCallable fault) throws Exception {
    try (Closer closer = new Closer()) {
      Latchkey holder = closer.add(connect(uri, lease, new WatchdogTally()));
      Lease held = holder.lock(name).acquire(Duration.ZERO);
      CompletableFuture<LeaseLostException> lost = lossOf(held);

      try {
        fault.call();
      } catch (Throwable e) {
        throw new AssertionError("the fault failed", e);
      }

      assertThat(lost.get(30, TimeUnit.SECONDS)).isNotNull();
      assertThat(held.isValid()).isFalse();
      assertThatThrownBy(held::release).isInstanceOf(LeaseLostException.class);
      Latchkey other = closer.add(connect(uri));
      Lease next = other.lock(name).acquire(Duration.ofSeconds(10));
      assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
      next.release();
      holder.lock(name).acquire(Duration.ofSeconds(10)).release();
    }
  }

  /**
   * @param server a database server
   * @param proxy a proxy in front of it
   * @return the server's JDBC URL, through the proxy
   */
  static String throughProxy(SqlTestServer server, FreezableTcpProxy proxy) {
    return server.jdbcUrl().replace(":" + server.port() + "/", ":" + proxy.port() + "/");
  }

  /** Closes what a test opened, the last first, even if some fail. */
  static final class Closer implements AutoCloseable {
    private final List<AutoCloseable> opened = new ArrayList<>();

    <T extends AutoCloseable> T add(T closeable) {
      opened.add(closeable);
      return closeable;
    }

    @Override
    public void close() {
      @Nullable IllegalStateException first = null;
      for (int i = opened.size() - 1; i >= 0; i--) {
        try {
          opened.get(i).close();
        } catch (Exception e) {
          if (first == null) {
            first = new IllegalStateException("closing " + opened.get(i) + " failed", e);
          } else {
            first.addSuppressed(e);
          }
        }
      }
      opened.clear();
      if (first != null) {
        throw first;
      }
    }
  }

  /**
   * A lease held by a client whose renewals are counted, and what the tests check of it: that it
   * outlives a trouble shorter than the lease and is renewed once the trouble ends, never reported
   * lost, and that its lock passes on to the next holder with a larger token.
   */
  static final class WatchedLease {
    private final Lease lease;
    private final WatchdogTally renewals;
    private final CompletableFuture<LeaseLostException> lost;

    /**
     * @param client a client made with {@code renewals} as its observer
     * @param renewals the client's renewals
     * @param name the lock to take (it must be free)
     */
    WatchedLease(Latchkey client, WatchdogTally renewals, String name) throws InterruptedException {
      this.lease = client.lock(name).acquire(Duration.ZERO);
      this.renewals = renewals;
      this.lost = lossOf(lease);
    }

    Lease lease() {
      return lease;
    }

    /** Waits until a renewal failed in the trouble, and checks that the lease is still valid. */
    void outlivesAFailedRenewal() {
      renewals.awaitNextFailure();
      assertThat(lease.isValid()).as("a lease outlives a trouble shorter than itself").isTrue();
    }

    /** Waits until the watchdog renewed it again; checks that it was never reported lost. */
    void isRenewedAgain() {
      renewals.awaitNextRenewal();
      assertThat(lease.isValid()).isTrue();
      assertThat(lost).as("no loss reported").isNotDone();
      assertThat(renewals.lost()).as("no loss observed").isZero();
    }

    /**
     * Checks that {@code other} cannot take the lock while it is held, releases it, and checks that
     * {@code other} then gets it with a larger fencing token.
     */
    void passesOnTo(Latchkey other) throws InterruptedException {
      assertThat(other.lock(lease.name()).tryAcquire()).as("the lock is still held").isEmpty();
      lease.release();
      Lease next = other.lock(lease.name()).acquire(Duration.ZERO);
      assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
      next.release();
    }
  }
}
