package io.latchkey.bench;

import io.latchkey.bench.LockClients.Library;
import io.latchkey.bench.LockClients.Style;
import io.latchkey.servers.RedisTestServer;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Bytes allocated per uncontended acquire+release cycle, counted by the JVM for every thread (the
 * caller's, the client libraries' network and timer threads, latchkey's scheduler): exact, and
 * independent of the machine's load, unlike JMH's {@code -prof gc} over short iterations, whose few
 * cycles on a loaded machine let the background threads' allocation swamp the figure.
 *
 * <p>Each variant runs alone: a warm-up, then several measured batches of cycles, one thread, one
 * lock. A batch's figure is the growth of the allocation counters of all threads alive at its end,
 * divided by its cycles; a thread that ended during the batch is not counted (the libraries keep
 * their threads for the whole run). The lowest batch is reported (background bursts such as a
 * watchdog round only add), with the median beside it.
 *
 * <p>{@link RedisBenchmarks} runs it as one of its steps; alone, on a {@code redis-server} of its
 * own: {@code java -cp latchkey-bench/target/latchkey-benchmarks.jar
 * io.latchkey.bench.AllocationCounts}.
 */
public final class AllocationCounts {
  private static final int WARMUP_CYCLES = 20_000;
  private static final int BATCH_CYCLES = 10_000;
  private static final int BATCHES = 5;

  private AllocationCounts() {}

  /**
   * Measures every variant on a server of its own and prints the figures.
   *
   * @param args none
   * @throws Exception if a cycle fails
   */
  public static void main(String[] args) throws Exception {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    try (RedisTestServer server = RedisTestServer.start()) {
      for (Allocated variant : measure(server.uri())) {
        System.out.printf(
            Locale.ROOT,
            "%-22s lowest %,8.0f B/cycle   median %,8.0f B/cycle%n",
            variant.label(),
            variant.lowest(),
            variant.median());
      }
    }
  }

  /** One variant's figures, bytes per cycle. */
  record Allocated(String label, double lowest, double median) {}

  /**
   * Measures the floor, latchkey's backend alone, latchkey ({@code lock()}/{@code unlock()} and
   * leases) and Redisson, one after the other, on the given server.
   */
  static List<Allocated> measure(String uri) throws Exception {
    List<Allocated> results = new ArrayList<>();
    for (Library library :
        List.of(Library.FLOOR, Library.SPI, Library.LATCHKEY, Library.REDISSON)) {
      List<Style> styles =
          library == Library.LATCHKEY || library == Library.REDISSON
              ? List.of(Style.LOCK, Style.LEASE)
              : List.of(Style.LOCK);
      try (LockClients clients =
          LockClients.open(library, 1, uri, LockClients.DEFAULT_WATCHDOG_LEASE)) {
        for (Style style : styles) {
          String label =
              library.label()
                  + (styles.size() > 1 ? " (" + style.name().toLowerCase(Locale.ROOT) + ")" : "");
          String name = "alloc:" + label + ":" + System.nanoTime();
          results.add(measure(label, clients.cycle(0, name, "alloc", style)));
        }
      }
    }
    return results;
  }

  private static Allocated measure(String label, LockClients.Cycle cycle) throws Exception {
    for (int i = 0; i < WARMUP_CYCLES; i++) {
      cycle.run();
    }
    double[] perCycle = new double[BATCHES];
    for (int batch = 0; batch < BATCHES; batch++) {
      Map<Long, Long> before = allocatedByThread();
      for (int i = 0; i < BATCH_CYCLES; i++) {
        cycle.run();
      }
      Map<Long, Long> after = allocatedByThread();
      long grown = 0;
      for (Map.Entry<Long, Long> thread : after.entrySet()) {
        grown += thread.getValue() - before.getOrDefault(thread.getKey(), 0L);
      }
      perCycle[batch] = (double) grown / BATCH_CYCLES;
    }
    Arrays.sort(perCycle);
    return new Allocated(label, perCycle[0], perCycle[BATCHES / 2]);
  }

  private static Map<Long, Long> allocatedByThread() {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long[] ids = threads.getAllThreadIds();
    long[] bytes = threads.getThreadAllocatedBytes(ids);
    Map<Long, Long> byThread = new HashMap<>();
    for (int i = 0; i < ids.length; i++) {
      if (bytes[i] >= 0) {
        byThread.put(ids[i], bytes[i]);
      }
    }
    return byThread;
  }
}
