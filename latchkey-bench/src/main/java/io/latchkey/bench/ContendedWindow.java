package io.latchkey.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * One timed window of threads contending for locks, as a user's threads would: each thread repeats
 * acquire, an unsynchronised increment of its lock's counter, release. The threads run for a
 * settling time, then for the measured window, then stop after the cycle they are in. Measured per
 * window: cycles per second, the wait of each acquisition (from the call to its return), fairness
 * (the fewest grants of a thread divided by the most), and the hand-off: from the moment a thread
 * calls release to the moment another thread's acquire of the same lock returns (a thread that
 * takes the lock back itself is no hand-off). Each lock's counter is checked against its grants at
 * the end: a lock that let two threads in would lose increments.
 *
 * <p>Thread {@code i} uses locker {@code i}, which must be on lock {@code i % locks}: one lock for
 * all ({@code locks = 1}) or a lock each ({@code locks = lockers.size()}).
 */
final class ContendedWindow {
  private static final Duration JOIN_TIMEOUT = Duration.ofSeconds(60);

  private ContendedWindow() {}

  /** Hooks around the measured window, for counts of the server's own (commands, writes). */
  interface Probe {
    /** Called right before the window opens. */
    void start() throws Exception;

    /** Called right after it closes, while the threads still run. */
    void stop() throws Exception;
  }

  /** A probe that counts nothing. */
  static final Probe NO_PROBE =
      new Probe() {
        @Override
        public void start() {}

        @Override
        public void stop() {}
      };

  /** What one window measured. */
  static final class Result {
    private final long cycles;
    private final double seconds;
    private final long[] grantsPerThread;
    private final long[] waitNanos;
    private final long[] handoffNanos;
    private final String load;
    private final long compileMillis;

    Result(
        long cycles,
        double seconds,
        long[] grantsPerThread,
        long[] waitNanos,
        long[] handoffNanos,
        String load,
        long compileMillis) {
      this.cycles = cycles;
      this.seconds = seconds;
      this.grantsPerThread = grantsPerThread.clone();
      this.waitNanos = waitNanos.clone();
      this.handoffNanos = handoffNanos.clone();
      this.load = load;
      this.compileMillis = compileMillis;
    }

    /** Acquire+release cycles of all threads in the window. */
    long cycles() {
      return cycles;
    }

    /** Cycles per second, all threads together. */
    double throughput() {
      return cycles / seconds;
    }

    /** The fewest grants of a thread in the window divided by the most (1 is perfectly fair). */
    double fairness() {
      long min = Arrays.stream(grantsPerThread).min().orElse(0);
      long max = Arrays.stream(grantsPerThread).max().orElse(1);
      return min / (double) Math.max(1, max);
    }

    /** The q-quantile of the acquisitions' waits, in ms. */
    double waitMillis(double q) {
      return quantile(waitNanos, q) / 1e6;
    }

    /** The q-quantile of the hand-offs, in ms; NaN if there was none. */
    double handoffMillis(double q) {
      return handoffNanos.length == 0 ? Double.NaN : quantile(handoffNanos, q) / 1e6;
    }

    /** The 1-minute load average when the window opened (with the 5- and 15-minute ones). */
    String load() {
      return load;
    }

    /**
     * The time the JVM's JIT compilers spent compiling during the window, in ms (summed over the
     * compiler threads; -1 if the JVM does not tell): on a machine of few cores, a library whose
     * code is still being compiled has less of them for its cycles.
     */
    long compileMillis() {
      return compileMillis;
    }

    private static double quantile(long[] sorted, double q) {
      return sorted[(int) Math.round(q * (sorted.length - 1))];
    }
  }

  /** The shared state of one window's threads. */
  private static final class Run {
    volatile boolean running = true;
    volatile boolean measuring;
    final AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();
    // Unsynchronised on purpose: only the lock keeps its increments whole.
    final long[] counters;
    // Written by the holder just before it releases: when, and who.
    final AtomicLongArray releasedAt;
    final AtomicIntegerArray releasedBy;

    Run(int locks) {
      counters = new long[locks];
      releasedAt = new AtomicLongArray(locks);
      releasedBy = new AtomicIntegerArray(locks);
      for (int i = 0; i < locks; i++) {
        releasedBy.set(i, -1);
      }
    }
  }

  /** One thread's tallies, read after it stopped. */
  private static final class Tally {
    long grants;
    long measuredGrants;
    final LongSamples waits = new LongSamples();
    final LongSamples handoffs = new LongSamples();
  }

  /**
   * Runs one window.
   *
   * @param label what runs, for error messages
   * @param lockers one per thread; locker {@code i} on lock {@code i % locks}
   * @param locks how many locks the lockers share
   * @param settle how long the threads run before the window
   * @param window how long the window lasts
   * @param probe called around the window
   * @throws IllegalStateException if a cycle failed, a thread did not stop, no cycle completed in
   *     the window, or a counter lost increments
   */
  static Result measure(
      String label, List<Locker> lockers, int locks, Duration settle, Duration window, Probe probe)
      throws Exception {
    Run run = new Run(locks);
    List<Thread> threads = new ArrayList<>();
    List<Tally> tallies = new ArrayList<>();
    for (int i = 0; i < lockers.size(); i++) {
      Tally tally = new Tally();
      tallies.add(tally);
      Locker locker = lockers.get(i);
      int index = i;
      Thread thread =
          new Thread(() -> loop(run, locker, index, index % locks, tally), "contended-" + i);
      thread.setDaemon(true);
      threads.add(thread);
    }
    threads.forEach(Thread::start);
    Thread.sleep(settle.toMillis());
    String load = RedisBenchmarks.loadAverage();
    probe.start();
    long compiledBefore = compileMillis();
    long start = System.nanoTime();
    run.measuring = true;
    Thread.sleep(window.toMillis());
    run.measuring = false;
    double seconds = (System.nanoTime() - start) / 1e9;
    long compiled = compiledBefore < 0 ? -1 : compileMillis() - compiledBefore;
    probe.stop();
    run.running = false;
    long deadline = System.nanoTime() + JOIN_TIMEOUT.toNanos();
    for (Thread thread : threads) {
      thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      if (thread.isAlive()) {
        throw new IllegalStateException(
            label + ": " + thread.getName() + " did not stop in " + JOIN_TIMEOUT);
      }
    }
    Throwable failed = run.failure.get();
    if (failed != null) {
      throw new IllegalStateException(label + ": a cycle failed: " + failed, failed);
    }
    for (int lock = 0; lock < locks; lock++) {
      long grants = 0;
      for (int i = lock; i < tallies.size(); i += locks) {
        grants += tallies.get(i).grants;
      }
      if (run.counters[lock] != grants) {
        throw new IllegalStateException(
            label
                + ": lock "
                + lock
                + "'s counter reads "
                + run.counters[lock]
                + " after "
                + grants
                + " grants");
      }
    }
    long[] perThread = tallies.stream().mapToLong(t -> t.measuredGrants).toArray();
    long cycles = Arrays.stream(perThread).sum();
    if (cycles == 0) {
      throw new IllegalStateException(label + ": no cycle completed in the window");
    }
    long[] waits = tallies.stream().flatMapToLong(t -> t.waits.stream()).sorted().toArray();
    long[] handoffs = tallies.stream().flatMapToLong(t -> t.handoffs.stream()).sorted().toArray();
    return new Result(cycles, seconds, perThread, waits, handoffs, load, compiled);
  }

  /** The JIT compilers' total time so far, in ms, or -1 if the JVM does not tell. */
  private static long compileMillis() {
    CompilationMXBean compiler = ManagementFactory.getCompilationMXBean();
    return compiler != null && compiler.isCompilationTimeMonitoringSupported()
        ? compiler.getTotalCompilationTime()
        : -1;
  }

  private static void loop(Run run, Locker locker, int thread, int lock, Tally tally) {
    try {
      while (run.running) {
        long start = System.nanoTime();
        locker.acquire();
        long granted = System.nanoTime();
        boolean measured = run.measuring;
        run.counters[lock]++;
        tally.grants++;
        int previous = run.releasedBy.get(lock);
        long releasedAt = run.releasedAt.get(lock);
        run.releasedBy.set(lock, thread);
        run.releasedAt.set(lock, System.nanoTime());
        locker.release();
        if (measured) {
          tally.measuredGrants++;
          tally.waits.add(granted - start);
          if (previous != thread && previous >= 0) {
            tally.handoffs.add(granted - releasedAt);
          }
        }
      }
    } catch (Throwable e) {
      run.failure.compareAndSet(null, e);
      run.running = false;
    }
  }
}
