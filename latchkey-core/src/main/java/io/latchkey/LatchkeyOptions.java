package io.latchkey;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Settings of one latchkey client. Immutable; start from {@link #defaults()} or {@link #builder()}.
 *
 * <p>Defaults: a 30 s watchdog lease renewed every 10 s, a 5 s bound on every backend operation, a
 * re-check of waiters at least every 2 s in case a wake-up is lost, wait-queue places kept for 5 s
 * without a sign of life.
 */
public final class LatchkeyOptions {
  /** The longest duration latchkey accepts anywhere: longer ones are taken for mistakes. */
  public static final Duration MAX_DURATION = Duration.ofDays(365);

  private final Duration leaseTime;
  private final Duration renewInterval;
  private final Duration operationTimeout;
  private final Duration recheckInterval;
  private final Duration queueKeepAlive;
  private final int renewBatchSize;
  private final Ticker ticker;
  private final Executor callbackExecutor;
  private final boolean closeOnShutdown;
  private final LatchkeyObserver observer;

  private LatchkeyOptions(Builder b) {
    this.leaseTime = b.leaseTime;
    this.renewInterval = b.renewInterval != null ? b.renewInterval : b.leaseTime.dividedBy(3);
    this.operationTimeout = b.operationTimeout;
    this.recheckInterval = b.recheckInterval;
    this.queueKeepAlive = b.queueKeepAlive;
    this.renewBatchSize = b.renewBatchSize;
    this.ticker = b.ticker;
    this.callbackExecutor = b.callbackExecutor;
    this.closeOnShutdown = b.closeOnShutdown;
    this.observer = b.observer;
    if (renewInterval.compareTo(leaseTime) >= 0) {
      throw new IllegalArgumentException(
          "renewInterval ("
              + renewInterval
              + ") must be shorter than leaseTime ("
              + leaseTime
              + "), or the lease runs out between renewals");
    }
  }

  /**
   * @return the default settings
   */
  public static LatchkeyOptions defaults() {
    return builder().build();
  }

  /**
   * @return a builder holding the defaults
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * @return the lease of holds taken without an explicit lease time, kept alive by the watchdog
   */
  public Duration leaseTime() {
    return leaseTime;
  }

  /**
   * @return how often the watchdog renews (by default a third of the lease)
   */
  public Duration renewInterval() {
    return renewInterval;
  }

  /**
   * @return the longest one backend operation may take before {@link BackendTimeoutException}
   */
  public Duration operationTimeout() {
    return operationTimeout;
  }

  /**
   * @return the longest a waiter sleeps without re-checking, in case a wake-up was lost
   */
  public Duration recheckInterval() {
    return recheckInterval;
  }

  /**
   * @return how long a lock waiter keeps its place in the lock's wait queue without renewing it (it
   *     renews it by re-checking at least three times as often); a dead waiter drops out after
   *     this, and with it any fair-lock turn it was holding up, and a dead writer's hold on new
   *     readers of a read-write lock
   */
  public Duration queueKeepAlive() {
    return queueKeepAlive;
  }

  /**
   * Where user code runs: lease-loss listeners, and the completions of asynchronous operations that
   * complete later (dependent stages of an {@code acquireAsync} run there, or on the caller's
   * thread when it completed at once). Never the thread that renews leases and enforces timeouts,
   * nor a client library's network thread, so a callback may block, even on latchkey itself. By
   * default a pool of daemon threads shared by the clients of the JVM, created on demand.
   *
   * @return the executor for user callbacks
   */
  public Executor callbackExecutor() {
    return callbackExecutor;
  }

  /**
   * @return the most leases the watchdog renews in one backend call
   */
  public int renewBatchSize() {
    return renewBatchSize;
  }

  /**
   * @return the clock of the engine
   */
  public Ticker ticker() {
    return ticker;
  }

  /**
   * @return whether a JVM shutdown hook closes the client, releasing what it holds
   */
  public boolean closeOnShutdown() {
    return closeOnShutdown;
  }

  /**
   * @return what hears the engine's events for metrics and tracing ({@link LatchkeyObserver#NONE}
   *     by default)
   */
  public LatchkeyObserver observer() {
    return observer;
  }

  /**
   * @return a builder starting from these settings
   */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.leaseTime = leaseTime;
    b.renewInterval = renewInterval;
    b.operationTimeout = operationTimeout;
    b.recheckInterval = recheckInterval;
    b.queueKeepAlive = queueKeepAlive;
    b.renewBatchSize = renewBatchSize;
    b.ticker = ticker;
    b.closeOnShutdown = closeOnShutdown;
    b.observer = observer;
    return b;
  }

  @Override
  public String toString() {
    return "LatchkeyOptions[leaseTime="
        + leaseTime
        + ", renewInterval="
        + renewInterval
        + ", operationTimeout="
        + operationTimeout
        + ", recheckInterval="
        + recheckInterval
        + ", queueKeepAlive="
        + queueKeepAlive
        + ", renewBatchSize="
        + renewBatchSize
        + "]";
  }

  /** The default callback executor: daemon threads made on demand, idle ones end after a minute. */
  private static final class DefaultCallbackExecutor {
    static final Executor INSTANCE = newPool();

    private DefaultCallbackExecutor() {}

    private static Executor newPool() {
      AtomicInteger count = new AtomicInteger();
      ThreadPoolExecutor pool =
          new ThreadPoolExecutor(
              0,
              Integer.MAX_VALUE,
              60,
              TimeUnit.SECONDS,
              new SynchronousQueue<>(),
              runnable -> {
                Thread thread =
                    new Thread(runnable, "latchkey-callback-" + count.incrementAndGet());
                thread.setDaemon(true);
                return thread;
              });
      return pool;
    }
  }

  /** Builds {@link LatchkeyOptions}; every setter checks its argument. */
  public static final class Builder {
    private Duration leaseTime = Duration.ofSeconds(30);
    private @Nullable Duration renewInterval;
    private Duration operationTimeout = Duration.ofSeconds(5);
    private Duration recheckInterval = Duration.ofSeconds(2);
    private Duration queueKeepAlive = Duration.ofSeconds(5);
    private int renewBatchSize = 1000;
    private Ticker ticker = Ticker.system();
    private Executor callbackExecutor = DefaultCallbackExecutor.INSTANCE;
    private boolean closeOnShutdown = true;
    private LatchkeyObserver observer = LatchkeyObserver.NONE;

    private Builder() {}

    /**
     * @param leaseTime the watchdog lease, at least 30 ms
     * @return this
     */
    public Builder leaseTime(Duration leaseTime) {
      this.leaseTime = checked("leaseTime", leaseTime, Duration.ofMillis(30));
      return this;
    }

    /**
     * @param renewInterval how often the watchdog renews, shorter than the lease
     * @return this
     */
    public Builder renewInterval(Duration renewInterval) {
      this.renewInterval = checked("renewInterval", renewInterval, Duration.ofMillis(10));
      return this;
    }

    /**
     * @param operationTimeout the bound of one backend operation, at least 10 ms
     * @return this
     */
    public Builder operationTimeout(Duration operationTimeout) {
      this.operationTimeout = checked("operationTimeout", operationTimeout, Duration.ofMillis(10));
      return this;
    }

    /**
     * @param recheckInterval the longest sleep of a waiter between checks, at least 1 ms
     * @return this
     */
    public Builder recheckInterval(Duration recheckInterval) {
      this.recheckInterval = checked("recheckInterval", recheckInterval, Duration.ofMillis(1));
      return this;
    }

    /**
     * @param queueKeepAlive how long a lock waiter's queue place outlives its last sign of life, at
     *     least 30 ms
     * @return this
     */
    public Builder queueKeepAlive(Duration queueKeepAlive) {
      this.queueKeepAlive = checked("queueKeepAlive", queueKeepAlive, Duration.ofMillis(30));
      return this;
    }

    /**
     * @param renewBatchSize the most leases per renewal call, 1 to 100000
     * @return this
     */
    public Builder renewBatchSize(int renewBatchSize) {
      if (renewBatchSize < 1 || renewBatchSize > 100_000) {
        throw new IllegalArgumentException(
            "renewBatchSize must be between 1 and 100000, was " + renewBatchSize);
      }
      this.renewBatchSize = renewBatchSize;
      return this;
    }

    /**
     * @param ticker the engine's clock
     * @return this
     */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker must not be null");
      return this;
    }

    /**
     * @param callbackExecutor where listeners and late completions of asynchronous operations run
     *     (see {@link LatchkeyOptions#callbackExecutor()})
     * @return this
     */
    public Builder callbackExecutor(Executor callbackExecutor) {
      this.callbackExecutor =
          Objects.requireNonNull(callbackExecutor, "callbackExecutor must not be null");
      return this;
    }

    /**
     * @param closeOnShutdown whether a JVM shutdown hook closes the client
     * @return this
     */
    public Builder closeOnShutdown(boolean closeOnShutdown) {
      this.closeOnShutdown = closeOnShutdown;
      return this;
    }

    /**
     * @param observer hears the engine's events; its methods must not block (see {@link
     *     LatchkeyObserver})
     * @return this
     */
    public Builder observer(LatchkeyObserver observer) {
      this.observer = Objects.requireNonNull(observer, "observer must not be null");
      return this;
    }

    /**
     * @return the options
     * @throws IllegalArgumentException if the renew interval is not shorter than the lease
     */
    public LatchkeyOptions build() {
      return new LatchkeyOptions(this);
    }

    private static Duration checked(String what, Duration value, Duration min) {
      Objects.requireNonNull(value, () -> what + " must not be null");
      if (value.compareTo(min) < 0 || value.compareTo(MAX_DURATION) > 0) {
        throw new IllegalArgumentException(
            what + " must be between " + min + " and " + MAX_DURATION + ", was " + value);
      }
      return value;
    }
  }
}
