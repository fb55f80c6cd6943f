package io.latchkey.bench;

import io.latchkey.bench.LockClients.Library;
import io.latchkey.bench.LockClients.Style;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Uncontended latency measured in pairs: one thread runs one acquire+release cycle of each variant
 * in turn (floor, latchkey's backend without the engine, latchkey, Redisson), round after round,
 * starting each round with the next variant, and times every cycle. Each variant thus sees the same
 * machine at the same moments, so their ratios hold on a machine whose load drifts, where JMH's
 * runs, one variant after the other, can each meet a different load.
 */
final class PairedLatency {
  private static final int INITIAL_CAPACITY = 1 << 16;

  private PairedLatency() {}

  /** The timed cycles of one variant. */
  static final class Latencies {
    private final String label;
    private long[] nanos = new long[INITIAL_CAPACITY];
    private int count;
    private long[] sorted = new long[0];

    Latencies(String label) {
      this.label = label;
    }

    String label() {
      return label;
    }

    int count() {
      return count;
    }

    void add(long elapsed) {
      if (count == nanos.length) {
        nanos = Arrays.copyOf(nanos, count * 2);
      }
      nanos[count++] = elapsed;
    }

    /** The q-quantile (0 to 1), in µs. */
    double percentileMicros(double q) {
      if (sorted.length != count) {
        sorted = Arrays.copyOf(nanos, count);
        Arrays.sort(sorted);
      }
      return sorted[(int) Math.round(q * (count - 1))] / 1e3;
    }

    /** The mean, in µs. */
    double meanMicros() {
      long sum = 0;
      for (int i = 0; i < count; i++) {
        sum += nanos[i];
      }
      return sum / 1e3 / count;
    }
  }

  /**
   * Measures the four variants.
   *
   * @param uri the server
   * @param warmup how long to run before timing
   * @param window how long to time
   * @return the latencies, floor first
   */
  static List<Latencies> measure(String uri, Duration warmup, Duration window) throws Exception {
    List<Library> libraries =
        List.of(Library.FLOOR, Library.SPI, Library.LATCHKEY, Library.REDISSON);
    List<LockClients> opened = new ArrayList<>();
    try {
      List<LockClients.Cycle> cycles = new ArrayList<>();
      List<Latencies> latencies = new ArrayList<>();
      for (Library library : libraries) {
        LockClients clients = LockClients.open(library, 1, uri, LockClients.DEFAULT_WATCHDOG_LEASE);
        opened.add(clients);
        String name = "paired:" + library.label() + ":" + System.nanoTime();
        cycles.add(clients.cycle(0, name, "paired", Style.LOCK));
        latencies.add(new Latencies(library.label()));
      }
      run(cycles, null, warmup);
      run(cycles, latencies, window);
      return latencies;
    } finally {
      opened.forEach(LockClients::close);
    }
  }

  private static void run(
      List<LockClients.Cycle> cycles, @Nullable List<Latencies> latencies, Duration duration)
      throws Exception {
    long end = System.nanoTime() + duration.toNanos();
    int variants = cycles.size();
    for (int round = 0; System.nanoTime() < end; round++) {
      for (int i = 0; i < variants; i++) {
        int variant = (round + i) % variants;
        long start = System.nanoTime();
        cycles.get(variant).run();
        long elapsed = System.nanoTime() - start;
        if (latencies != null) {
          latencies.get(variant).add(elapsed);
        }
      }
    }
  }
}
