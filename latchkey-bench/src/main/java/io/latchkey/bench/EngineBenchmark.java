package io.latchkey.bench;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LockMode;
import io.latchkey.memory.MemoryLockServer;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.ResourceType;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the engine costs: one acquire plus one release of a lock on the in-memory backend, in three
 * shapes, each beside the floors it should be compared with.
 *
 * <p>Shapes (the method name's prefix):
 *
 * <ul>
 *   <li>{@code single}: one thread, one lock, never contended. Measured as average time per
 *       acquire+release pair (µs/op): the latency a caller pays.
 *   <li>{@code contended}: eight threads on one lock name. Measured as throughput of all threads
 *       together (pairs per µs).
 *   <li>{@code independent}: eight threads, each on a lock name of its own, all through one client.
 *       Throughput of all threads together: what the client and backend share between unrelated
 *       locks.
 * </ul>
 *
 * <p>Variants (the method name's suffix):
 *
 * <ul>
 *   <li>{@code EngineLock}: {@link DistributedLock#lock()} and {@link DistributedLock#unlock()},
 *       owned by the calling thread.
 *   <li>{@code EngineLease}: {@link DistributedLock#acquire(Duration)} and {@link Lease#close()}.
 *   <li>{@code BackendSpi}: the backend's {@link LockStore} called directly with the same requests
 *       the engine sends, with no engine in between. When the lock is busy it retries at once
 *       (yielding the CPU), without any waiting policy. The gap between this and the engine
 *       variants is the engine's overhead.
 *   <li>{@code ReentrantLock}: {@link ReentrantLock}, the in-process floor.
 * </ul>
 *
 * <p>The critical sections are empty: the numbers are the cost of the locking alone. Every variant
 * uses one client (or one backend connection) for all threads, as an application would: a client
 * per process. Leases are the default watchdog lease (30 s), so no lease runs out during a run.
 *
 * <p>Defaults fit a small (2-core) machine and a run of under six minutes; {@code
 * docs/benchmarks.md} has the command and the results.
 */
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
// Eight busy threads on two cores starve the JIT's compiler threads: the engine variants need about
// 8 s to reach their plateau there, hence five warm-up iterations.
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 3)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class EngineBenchmark {
  private static final String SHARED_NAME = "bench/shared";

  /** Long enough that the contended Lease variant never times out, even on a starved thread. */
  private static final Duration WAIT = Duration.ofMinutes(1);

  /** Creates the benchmark; JMH does this. */
  public EngineBenchmark() {}

  /**
   * What all threads share: one in-memory server, one latchkey client on it, one raw backend
   * connection on it, and the shared lock in each variant.
   */
  @State(Scope.Benchmark)
  public static class Fixture {
    // Assigned in start(), before any benchmark method runs.
    MemoryLockServer server;
    Latchkey client;
    LatchkeyBackend backend;
    DistributedLock sharedLock;
    ReentrantLock sharedReentrantLock;
    final AtomicInteger nextThread = new AtomicInteger();

    /** Creates the fixture; JMH does this. */
    public Fixture() {}

    /** Opens the server, the client and the raw connection. */
    @Setup(Level.Trial)
    public void start() {
      server = new MemoryLockServer();
      LatchkeyOptions options = LatchkeyOptions.builder().closeOnShutdown(false).build();
      client = Latchkey.using(server.backend(), options);
      backend =
          server
              .backend()
              .open(
                  new BackendContext(
                      "spi-baseline", options.operationTimeout(), options.leaseTime()));
      sharedLock = client.lock(SHARED_NAME);
      sharedReentrantLock = new ReentrantLock();
    }

    /** Closes the client and the raw connection. */
    @TearDown(Level.Trial)
    public void stop() {
      client.close();
      backend.close();
    }
  }

  /**
   * One benchmark thread's own things: a lock name of its own (for the independent shape) and, for
   * the SPI variant, an owner id of its own with the requests the engine would send for it.
   */
  @State(Scope.Thread)
  public static class ThreadFixture {
    // Assigned in start(), before any benchmark method runs.
    DistributedLock ownLock;
    ReentrantLock ownReentrantLock;
    String owner;
    LockRequest sharedRequest;
    LockRequest ownRequest;

    /** Creates the fixture; JMH does this. */
    public ThreadFixture() {}

    /**
     * Picks this thread's lock name and owner id.
     *
     * @param fixture the shared fixture, already started
     */
    @Setup(Level.Trial)
    public void start(Fixture fixture) {
      int index = fixture.nextThread.getAndIncrement();
      String ownName = "bench/thread-" + index;
      LatchkeyOptions options = fixture.client.options();
      long leaseMillis = options.leaseTime().toMillis();
      long keepAliveMillis = options.queueKeepAlive().toMillis();
      ownLock = fixture.client.lock(ownName);
      ownReentrantLock = new ReentrantLock();
      owner = "spi-baseline:" + index;
      sharedRequest =
          new LockRequest(
              SHARED_NAME, owner, LockMode.EXCLUSIVE, leaseMillis, false, keepAliveMillis);
      ownRequest =
          new LockRequest(ownName, owner, LockMode.EXCLUSIVE, leaseMillis, false, keepAliveMillis);
    }
  }

  // ---- one thread, one lock ----

  /**
   * @param f the shared fixture
   */
  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  @Threads(1)
  public void singleEngineLock(Fixture f) {
    lockAndUnlock(f.sharedLock);
  }

  /**
   * @param f the shared fixture
   * @throws InterruptedException never: JMH does not interrupt
   */
  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  @Threads(1)
  public void singleEngineLease(Fixture f) throws InterruptedException {
    acquireAndClose(f.sharedLock);
  }

  /**
   * @param f the shared fixture
   * @param t this thread's fixture
   */
  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  @Threads(1)
  public void singleBackendSpi(Fixture f, ThreadFixture t) {
    acquireAndRelease(f.backend.locks(), t.sharedRequest);
  }

  /**
   * @param f the shared fixture
   */
  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  @Threads(1)
  public void singleReentrantLock(Fixture f) {
    lockAndUnlock(f.sharedReentrantLock);
  }

  // ---- eight threads, one lock ----

  /**
   * @param f the shared fixture
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @Threads(8)
  public void contendedEngineLock(Fixture f) {
    lockAndUnlock(f.sharedLock);
  }

  /**
   * @param f the shared fixture
   * @throws InterruptedException never: JMH does not interrupt
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @Threads(8)
  public void contendedEngineLease(Fixture f) throws InterruptedException {
    acquireAndClose(f.sharedLock);
  }

  /**
   * @param f the shared fixture
   * @param t this thread's fixture
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @Threads(8)
  public void contendedBackendSpi(Fixture f, ThreadFixture t) {
    acquireAndRelease(f.backend.locks(), t.sharedRequest);
  }

  /**
   * @param f the shared fixture
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @Threads(8)
  public void contendedReentrantLock(Fixture f) {
    lockAndUnlock(f.sharedReentrantLock);
  }

  // ---- eight threads, a lock each ----

  /**
   * @param t this thread's fixture
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @Threads(8)
  public void independentEngineLock(ThreadFixture t) {
    lockAndUnlock(t.ownLock);
  }

  /**
   * @param t this thread's fixture
   * @throws InterruptedException never: JMH does not interrupt
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @Threads(8)
  public void independentEngineLease(ThreadFixture t) throws InterruptedException {
    acquireAndClose(t.ownLock);
  }

  /**
   * @param f the shared fixture
   * @param t this thread's fixture
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @Threads(8)
  public void independentBackendSpi(Fixture f, ThreadFixture t) {
    acquireAndRelease(f.backend.locks(), t.ownRequest);
  }

  /**
   * @param t this thread's fixture
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @Threads(8)
  public void independentReentrantLock(ThreadFixture t) {
    lockAndUnlock(t.ownReentrantLock);
  }

  // ---- the measured operations ----

  private static void lockAndUnlock(Lock lock) {
    lock.lock();
    try {
      // The critical section is empty: only the locking is measured.
    } finally {
      lock.unlock();
    }
  }

  private static void acquireAndClose(DistributedLock lock) throws InterruptedException {
    Lease lease = lock.acquire(WAIT);
    lease.close();
  }

  /**
   * The SPI floor: one atomic acquire step (repeated while the lock is busy) and one release step,
   * each checked so that a broken run cannot pass for a fast one.
   */
  private static void acquireAndRelease(LockStore locks, LockRequest request) {
    AcquireResult granted = locks.tryAcquire(request).toCompletableFuture().join();
    while (!granted.isGranted()) {
      Thread.yield();
      granted = locks.tryAcquire(request).toCompletableFuture().join();
    }
    GrantRef grant =
        new GrantRef(
            new HolderRef(ResourceType.LOCK, request.name(), request.owner()),
            granted.fencingToken());
    ReleaseResult released = locks.release(grant, request.mode()).toCompletableFuture().join();
    if (!released.wasHeld()) {
      throw new IllegalStateException("the backend lost a hold of " + request.owner());
    }
  }
}
