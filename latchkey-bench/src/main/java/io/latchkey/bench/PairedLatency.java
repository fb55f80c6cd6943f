package io.latchkey.bench;

import io.latchkey.bench.LockClients.Library;
import io.latchkey.bench.LockClients.Style;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Uncontended latency measured in pairs: one thread runs one acquire+release cycle of each variant
 * in turn (for Redis: floor, latchkey's backend without the engine, latchkey, Redisson; or any list
 * of variants), round after round, starting each round with the next variant, and times every
 * cycle. Each variant thus sees the same machine at the same moments, so their ratios hold on a
 * machine whose load drifts, where JMH's runs, one variant after the other, can each meet a
 * different load.
 */
final class PairedLatency {
  private PairedLatency() {}

  /** The timed cycles of one variant. */
  static final class Latencies {
    private final String label;
    private final LongSamples nanos = new LongSamples();
    private long[] sorted = new long[0];

    Latencies(String label) {
      this.label = label;
    }

    String label() {
      return label;
    }

    int count() {
      return nanos.count();
    }

    void add(long elapsed) {
      nanos.add(elapsed);
    }

    /** The q-quantile (0 to 1), in µs. */
    double percentileMicros(double q) {
      if (sorted.length != nanos.count()) {
        sorted = nanos.stream().sorted().toArray();
      }
      return sorted[(int) Math.round(q * (sorted.length - 1))] / 1e3;
    }

    /** The mean, in µs. */
    double meanMicros() {
      return nanos.stream().sum() / 1e3 / nanos.count();
    }
  }

  /** One variant: a label and the cycle it repeats. */
  record Variant(String label, LockClients.Cycle cycle) {}

  /**
   * Measures the four Redis variants.
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
      List<Variant> variants = new ArrayList<>();
      for (Library library : libraries) {
        LockClients clients = LockClients.open(library, 1, uri, LockClients.DEFAULT_WATCHDOG_LEASE);
        opened.add(clients);
        String name = "paired:" + library.label() + ":" + System.nanoTime();
        variants.add(new Variant(library.label(), clients.cycle(0, name, "paired", Style.LOCK)));
      }
      return measure(variants, warmup, window);
    } finally {
      opened.forEach(LockClients::close);
    }
  }

  /**
   * Measures any variants, interleaved cycle by cycle.
   *
   * @param variants what to measure
   * @param warmup how long to run before timing
   * @param window how long to time
   * @return the latencies, in the order of the variants
   */
  static List<Latencies> measure(List<Variant> variants, Duration warmup, Duration window)
      throws Exception {
    List<LockClients.Cycle> cycles = new ArrayList<>();
    List<Latencies> latencies = new ArrayList<>();
    for (Variant variant : variants) {
      cycles.add(variant.cycle());
      latencies.add(new Latencies(variant.label()));
    }
    run(cycles, null, warmup);
    run(cycles, latencies, window);
    return latencies;
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
