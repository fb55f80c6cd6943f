package io.latchkey.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LockTimeoutException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Conformance: many threads of several clients doing an unsynchronised read-modify-write under the
 * lock. Each test runs 3 clients × 4 threads × {@link #iterations()} increments (system property
 * {@value #ITERATIONS_PROPERTY}, default 50) of a counter whose increment is a read, a yield and a
 * write: any overlap of two holders loses an update, and is also counted directly.
 *
 * <ul>
 *   <li>{@link #reentrantLockKeepsTheCounterExact}: the reentrant lock through {@code tryLock} and
 *       {@code unlock}.
 *   <li>{@link #fairLockKeepsTheCounterExact}: the fair lock through {@code acquire} and its lease.
 *   <li>{@link #mutexKeepsTheCounterExact}: the non-reentrant mutex.
 *   <li>{@link #writeLockKeepsTheCounterExact}: the write side of the read-write lock, with a
 *       reader per client that must never see a writer inside.
 * </ul>
 */
public abstract class MutualExclusionStressContract extends ContractSupport {
  /** The system property that overrides the increments per thread. */
  public static final String ITERATIONS_PROPERTY = "latchkey.stress.iterations";

  private static final int DEFAULT_ITERATIONS = 50;
  private static final int CLIENTS = 3;
  private static final int THREADS_PER_CLIENT = 4;
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final Duration RUN_TIMEOUT = Duration.ofMinutes(3);

  /**
   * The counter under test. Volatile so that a wrong total can only mean that two holders
   * overlapped (not that one thread saw a stale value); the increment stays a separate read and
   * write.
   */
  private static final class Counter {
    private volatile long value;
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger overlaps = new AtomicInteger();

    void increment() {
      if (inside.incrementAndGet() != 1) {
        overlaps.incrementAndGet();
      }
      long seen = value;
      Thread.yield();
      value = seen + 1;
      inside.decrementAndGet();
    }

    boolean someoneInside() {
      return inside.get() != 0;
    }
  }

  /**
   * @return the increments per thread
   */
  protected static int iterations() {
    return Integer.getInteger(ITERATIONS_PROPERTY, DEFAULT_ITERATIONS);
  }

  private List<Latchkey> clients() {
    return List.of(client(), newClient(), newClient());
  }

  private void assertExact(Counter counter) {
    assertThat(counter.overlaps.get()).as("times two holders were inside at once").isZero();
    assertThat(counter.value)
        .as(
            "total of %d clients × %d threads × %d increments",
            CLIENTS, THREADS_PER_CLIENT, iterations())
        .isEqualTo((long) CLIENTS * THREADS_PER_CLIENT * iterations());
  }

  @Test
  public void reentrantLockKeepsTheCounterExact() throws InterruptedException {
    String name = uniqueName("stress-lock");
    Counter counter = new Counter();
    int iterations = iterations();

    Contention.run(
        executor(CLIENTS * THREADS_PER_CLIENT),
        clients(),
        THREADS_PER_CLIENT,
        RUN_TIMEOUT,
        (latchkey, thread) -> {
          DistributedLock lock = latchkey.lock(name);
          for (int i = 0; i < iterations; i++) {
            if (!lock.tryLock(WAIT)) {
              throw new LockTimeoutException("no turn at '" + name + "' within " + WAIT);
            }
            try {
              counter.increment();
            } finally {
              lock.unlock();
            }
          }
        });

    assertExact(counter);
  }

  @Test
  @RequiresFeature(Feature.FAIR_LOCK)
  public void fairLockKeepsTheCounterExact() throws InterruptedException {
    String name = uniqueName("stress-fair");
    incrementUnderLeases(latchkey -> latchkey.fairLock(name)::acquire);
  }

  @Test
  public void mutexKeepsTheCounterExact() throws InterruptedException {
    String name = uniqueName("stress-mutex");
    incrementUnderLeases(latchkey -> latchkey.mutex(name)::acquire);
  }

  /** Where a stressing thread gets each of its leases. */
  @FunctionalInterface
  private interface LeaseSource {
    Lease acquire(Duration wait) throws InterruptedException;
  }

  /** Every thread of every client increments under a lease from its client's source. */
  private void incrementUnderLeases(Function<Latchkey, LeaseSource> sources)
      throws InterruptedException {
    Counter counter = new Counter();
    int iterations = iterations();

    Contention.run(
        executor(CLIENTS * THREADS_PER_CLIENT),
        clients(),
        THREADS_PER_CLIENT,
        RUN_TIMEOUT,
        (latchkey, thread) -> {
          LeaseSource source = sources.apply(latchkey);
          for (int i = 0; i < iterations; i++) {
            Lease lease = source.acquire(WAIT);
            try {
              counter.increment();
            } finally {
              lease.release();
            }
          }
        });

    assertExact(counter);
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  public void writeLockKeepsTheCounterExact() throws InterruptedException {
    String name = uniqueName("stress-rw");
    Counter counter = new Counter();
    AtomicInteger readersSawWriter = new AtomicInteger();
    int iterations = iterations();

    // Per client, the last thread reads while the others write; the writers' total is checked.
    Contention.run(
        executor(CLIENTS * (THREADS_PER_CLIENT + 1)),
        clients(),
        THREADS_PER_CLIENT + 1,
        RUN_TIMEOUT,
        (latchkey, thread) -> {
          DistributedReadWriteLock lock = latchkey.readWriteLock(name);
          boolean reader = thread == THREADS_PER_CLIENT;
          DistributedLock side = reader ? lock.readLock() : lock.writeLock();
          for (int i = 0; i < iterations; i++) {
            if (!side.tryLock(WAIT)) {
              throw new LockTimeoutException("no turn at '" + name + "' within " + WAIT);
            }
            try {
              if (reader) {
                if (counter.someoneInside()) {
                  readersSawWriter.incrementAndGet();
                }
                Thread.yield();
              } else {
                counter.increment();
              }
            } finally {
              side.unlock();
            }
          }
        });

    assertExact(counter);
    assertThat(readersSawWriter.get()).as("times a reader saw a writer inside").isZero();
  }
}
