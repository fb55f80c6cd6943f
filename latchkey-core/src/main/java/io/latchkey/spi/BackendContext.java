package io.latchkey.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What the engine gives a backend when it opens it.
 *
 * @param clientId the client's random id; the backend records it with each grant so that monitors
 *     can tell which client holds what
 * @param operationTimeout the bound the engine puts on each operation; a client library's own
 *     timeouts should not be shorter
 * @param leaseTime the watchdog lease
 * @param scheduler the engine's scheduler, for the backend's own periodic or delayed work (a
 *     lingering subscription, a session check); tasks must be short and must not block: the same
 *     thread renews leases and enforces timeouts
 * @param blockingExecutor where a backend on a synchronous client library (JDBC, Curator's blocking
 *     calls) runs its calls; completing a stage there never blocks the engine
 * @param events where the backend reports grants lost, suspended or resumed between calls
 */
public record BackendContext(
    String clientId,
    Duration operationTimeout,
    Duration leaseTime,
    ScheduledExecutorService scheduler,
    Executor blockingExecutor,
    GrantEvents events) {
  /** Checks the components. */
  public BackendContext {
    Objects.requireNonNull(clientId, "clientId");
    Objects.requireNonNull(operationTimeout, "operationTimeout");
    Objects.requireNonNull(leaseTime, "leaseTime");
    Objects.requireNonNull(scheduler, "scheduler");
    Objects.requireNonNull(blockingExecutor, "blockingExecutor");
    Objects.requireNonNull(events, "events");
  }

  /**
   * A context for opening a backend outside an engine (tests, benchmarks): the JVM's common pool
   * runs blocking calls, a shared daemon scheduler the delayed work, and events go nowhere.
   *
   * @param clientId the client's id
   * @param operationTimeout the bound on each operation
   * @param leaseTime the watchdog lease
   */
  public BackendContext(String clientId, Duration operationTimeout, Duration leaseTime) {
    this(
        clientId,
        operationTimeout,
        leaseTime,
        StandaloneScheduler.INSTANCE,
        ForkJoinPool.commonPool(),
        GrantEvents.NONE);
  }

  /** The scheduler of contexts made without an engine: one daemon thread for the JVM. */
  private static final class StandaloneScheduler {
    static final ScheduledExecutorService INSTANCE =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "latchkey-standalone-backend");
              thread.setDaemon(true);
              return thread;
            });

    private StandaloneScheduler() {}
  }
}
