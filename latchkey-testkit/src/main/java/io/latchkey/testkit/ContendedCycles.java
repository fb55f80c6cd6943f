package io.latchkey.testkit;

import io.latchkey.DistributedLock;
import io.latchkey.LatchkeyOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Contention as tests that count a backend's work per cycle make it: threads that each take a lock
 * and let it go, a number of times, with nothing in between.
 */
public final class ContendedCycles {
  /**
   * Client options for counting a backend's work per cycle: leases long enough to keep the
   * watchdog's renewals and the presence refresh out of the count.
   */
  public static final LatchkeyOptions COUNTING_OPTIONS =
      LatchkeyOptions.builder()
          .leaseTime(Duration.ofMinutes(1))
          .renewInterval(Duration.ofSeconds(20))
          .closeOnShutdown(false)
          .build();

  private ContendedCycles() {}

  /**
   * Runs {@code threadsPerLock} threads on each of {@code locks} (a lock per client, typically),
   * each making {@code cycles} {@code lock()}/{@code unlock()} cycles, and waits for all of them.
   *
   * @param locks the locks, one handle per client
   * @param threadsPerLock how many threads share each handle
   * @param cycles the cycles of each thread
   * @param within how long all of them may take
   * @throws Exception if a thread failed or they did not finish in time
   */
  public static void run(
      List<DistributedLock> locks, int threadsPerLock, int cycles, Duration within)
      throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(locks.size() * threadsPerLock);
    try {
      List<CompletableFuture<Void>> done = new ArrayList<>();
      for (DistributedLock lock : locks) {
        for (int t = 0; t < threadsPerLock; t++) {
          done.add(
              CompletableFuture.runAsync(
                  () -> {
                    for (int cycle = 0; cycle < cycles; cycle++) {
                      lock.lock();
                      lock.unlock();
                    }
                  },
                  threads));
        }
      }
      CompletableFuture.allOf(done.toArray(CompletableFuture<?>[]::new))
          .get(within.toMillis(), TimeUnit.MILLISECONDS);
    } finally {
      threads.shutdownNow();
    }
  }
}
