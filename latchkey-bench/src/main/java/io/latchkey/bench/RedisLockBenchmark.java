package io.latchkey.bench;

import io.latchkey.bench.LockClients.Library;
import io.latchkey.bench.LockClients.Style;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Latchkey's Redis lock beside its floor and beside Redisson's {@code RLock}, on one real Redis:
 * one acquire plus one release of a lock with an empty critical section, in three shapes.
 *
 * <p>Shapes (the method name's prefix):
 *
 * <ul>
 *   <li>{@code single}: one thread, one lock, never contended. Sample time per pair (µs): JMH
 *       reports the mean and the percentiles (p50, p99); with one thread, the throughput is one
 *       over the mean.
 *   <li>{@code contended}: eight threads on one lock name. Throughput of all threads together
 *       (pairs per second).
 *   <li>{@code independent}: eight threads, a lock name each. Throughput of all threads together.
 * </ul>
 *
 * <p>Variants (the rest of the method name): {@code Floor} is two EVALSHA round trips of a trivial
 * script per pair, no lock (see {@link LockClients}); {@code LatchkeySpi} (one thread only) is
 * latchkey's Redis backend called directly, without the engine; {@code LatchkeyLock} and {@code
 * RedissonLock} are {@code lock()} and {@code unlock()} (watchdog lease, 30 s); {@code
 * LatchkeyLease} and {@code RedissonLease} are {@code tryLock(1 min, lease 30 s)} and {@code
 * unlock()} (no watchdog). Without a suffix, all threads share one client, as an application shares
 * one per process; {@code 8Clients} gives each thread a client of its own (its own connections and
 * subscription), as eight processes would have, all in this JVM.
 *
 * <p>The server is the one named by the system property {@code latchkey.bench.redis}, which {@link
 * RedisBenchmarks} sets for its forks, so that every benchmark of a run uses the server it started;
 * without the property each fork starts a server of its own (never the machine's Redis).
 */
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 4, time = 2)
public class RedisLockBenchmark {
  /** Creates the benchmark; JMH does this. */
  public RedisLockBenchmark() {}

  /**
   * What all threads share: the server and the clients of the variant being measured, chosen by the
   * benchmark method's name.
   */
  @State(Scope.Benchmark)
  public static class Fixture {
    // Assigned in start(), before any benchmark method runs.
    RedisTarget target;
    LockClients clients;
    Style style;
    boolean sharedName;
    String prefix;
    final AtomicInteger nextThread = new AtomicInteger();

    /** Creates the fixture; JMH does this. */
    public Fixture() {}

    /**
     * Opens the clients the benchmark method's name asks for.
     *
     * @param params the running benchmark
     */
    @Setup(Level.Trial)
    public void start(BenchmarkParams params) {
      String benchmark = params.getBenchmark();
      String method = benchmark.substring(benchmark.lastIndexOf('.') + 1);
      Library library =
          method.contains("Floor")
              ? Library.FLOOR
              : method.contains("Spi")
                  ? Library.SPI
                  : method.contains("Latchkey") ? Library.LATCHKEY : Library.REDISSON;
      int count = method.endsWith("8Clients") ? 8 : 1;
      style = method.contains("Lease") ? Style.LEASE : Style.LOCK;
      sharedName = !method.startsWith("independent");
      prefix = "bench:" + method + ":";
      target = RedisTarget.fromPropertyOrStart();
      clients = LockClients.open(library, count, target.uri(), LockClients.DEFAULT_WATCHDOG_LEASE);
    }

    /** Closes the clients (and the server, if this fork started it). */
    @TearDown(Level.Trial)
    public void stop() {
      clients.close();
      target.close();
    }
  }

  /** One benchmark thread's cycle: its client, its lock name, its way of taking the lock. */
  @State(Scope.Thread)
  public static class ThreadFixture {
    // Assigned in start(), before any benchmark method runs.
    LockClients.Cycle cycle;

    /** Creates the fixture; JMH does this. */
    public ThreadFixture() {}

    /**
     * Picks this thread's client (round robin) and lock name.
     *
     * @param f the shared fixture, already started
     */
    @Setup(Level.Trial)
    public void start(Fixture f) {
      int index = f.nextThread.getAndIncrement();
      String name = f.prefix + (f.sharedName ? "shared" : "own-" + index);
      cycle = f.clients.cycle(index % f.clients.size(), name, "thread-" + index, f.style);
    }
  }

  // ---- one thread, one lock: sample time (p50, p99) ----

  /**
   * @param t this thread's fixture
   * @throws Exception if a reply is wrong or missing
   */
  @Benchmark
  @BenchmarkMode(Mode.SampleTime)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  @Threads(1)
  public void singleFloor(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  /**
   * @param t this thread's fixture
   * @throws Exception if the backend misbehaves
   */
  @Benchmark
  @BenchmarkMode(Mode.SampleTime)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  @Threads(1)
  public void singleLatchkeySpi(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  /**
   * @param t this thread's fixture
   * @throws Exception if the lock misbehaves
   */
  @Benchmark
  @BenchmarkMode(Mode.SampleTime)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  @Threads(1)
  public void singleLatchkeyLock(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  /**
   * @param t this thread's fixture
   * @throws Exception if the lock misbehaves
   */
  @Benchmark
  @BenchmarkMode(Mode.SampleTime)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  @Threads(1)
  public void singleLatchkeyLease(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  /**
   * @param t this thread's fixture
   * @throws Exception if the lock misbehaves
   */
  @Benchmark
  @BenchmarkMode(Mode.SampleTime)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  @Threads(1)
  public void singleRedissonLock(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  /**
   * @param t this thread's fixture
   * @throws Exception if the lock misbehaves
   */
  @Benchmark
  @BenchmarkMode(Mode.SampleTime)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  @Threads(1)
  public void singleRedissonLease(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  // ---- eight threads, one lock: throughput ----

  /**
   * @param t this thread's fixture
   * @throws Exception if a reply is wrong or missing
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @Threads(8)
  public void contendedFloor(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  /**
   * @param t this thread's fixture
   * @throws Exception if the lock misbehaves
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @Threads(8)
  public void contendedLatchkeyLock(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  /**
   * @param t this thread's fixture
   * @throws Exception if the lock misbehaves
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @Threads(8)
  public void contendedLatchkeyLease(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  /**
   * @param t this thread's fixture
   * @throws Exception if the lock misbehaves
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @Threads(8)
  public void contendedLatchkeyLock8Clients(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  /**
   * @param t this thread's fixture
   * @throws Exception if the lock misbehaves
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @Threads(8)
  public void contendedRedissonLock(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  /**
   * @param t this thread's fixture
   * @throws Exception if the lock misbehaves
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @Threads(8)
  public void contendedRedissonLease(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  /**
   * @param t this thread's fixture
   * @throws Exception if the lock misbehaves
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @Threads(8)
  public void contendedRedissonLock8Clients(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  // ---- eight threads, a lock each: throughput ----

  /**
   * @param t this thread's fixture
   * @throws Exception if a reply is wrong or missing
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @Threads(8)
  public void independentFloor(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  /**
   * @param t this thread's fixture
   * @throws Exception if the lock misbehaves
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @Threads(8)
  public void independentLatchkeyLock(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  /**
   * @param t this thread's fixture
   * @throws Exception if the lock misbehaves
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @Threads(8)
  public void independentLatchkeyLock8Clients(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  /**
   * @param t this thread's fixture
   * @throws Exception if the lock misbehaves
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @Threads(8)
  public void independentRedissonLock(ThreadFixture t) throws Exception {
    t.cycle.run();
  }

  /**
   * @param t this thread's fixture
   * @throws Exception if the lock misbehaves
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @Threads(8)
  public void independentRedissonLock8Clients(ThreadFixture t) throws Exception {
    t.cycle.run();
  }
}
