package io.latchkey.cli;

import io.latchkey.DistributedSemaphore;
import io.latchkey.Latchkey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * The flash sale ("seckill") of the mission: buyers take one item at a time from a shared stock of
 * {@code stock} items until it is gone, once per {@link SaleGuard}. Who the buyers are — threads of
 * this JVM or worker processes — is up to {@link Buyers}; this class prepares each run, times it
 * and sums up what the buyers report.
 */
final class FlashSale {
  /** The longest one run may take before the demo gives up. */
  static final Duration RUN_TIMEOUT = Duration.ofMinutes(2);

  /** The buyers of a sale. */
  interface Buyers {
    /**
     * Runs the buyers until the stock is sold out, each on a fresh stock of {@code stock} items.
     *
     * @param onSale told of every item sold, with the buyer's wait; called from any thread
     */
    void buy(SaleGuard guard, int stock, LongConsumer onSale) throws InterruptedException;
  }

  /** What one run sold and how fast. */
  record Result(
      SaleGuard guard,
      long sold,
      long oversold,
      double throughputPerSecond,
      long p50WaitNanos,
      long p99WaitNanos,
      long elapsedNanos) {}

  private final Latchkey latchkey;
  private final int stock;
  private final Buyers buyers;

  FlashSale(Latchkey latchkey, int stock, Buyers buyers) {
    this.latchkey = latchkey;
    this.stock = stock;
    this.buyers = buyers;
  }

  Result run(SaleGuard guard, LongConsumer progress) throws InterruptedException {
    if (guard == SaleGuard.SEMAPHORE) {
      DistributedSemaphore checkout = latchkey.semaphore(guard.resource());
      if (!checkout.trySetPermits(stock)) {
        int change = stock - checkout.availablePermits();
        if (change != 0) {
          checkout.addPermits(change);
        }
      }
    }
    AtomicLong sold = new AtomicLong();
    List<Long> waits = new ArrayList<>();
    progress.accept(0);
    long start = System.nanoTime();
    buyers.buy(
        guard,
        stock,
        wait -> {
          synchronized (waits) {
            waits.add(wait);
          }
          progress.accept(sold.incrementAndGet());
        });
    long elapsed = System.nanoTime() - start;
    long[] sorted;
    synchronized (waits) {
      sorted = waits.stream().mapToLong(Long::longValue).sorted().toArray();
    }
    long total = sold.get();
    return new Result(
        guard,
        total,
        Math.max(0, total - stock),
        total / (elapsed / 1e9),
        percentile(sorted, 0.50),
        percentile(sorted, 0.99),
        elapsed);
  }

  private static long percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    int index = (int) Math.ceil(p * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  /** Buyer threads of this JVM sharing one in-memory stock: for the in-process backend. */
  static final class Threads implements Buyers {
    private final Latchkey latchkey;
    private final int threads;

    Threads(Latchkey latchkey, int threads) {
      this.latchkey = latchkey;
      this.threads = threads;
    }

    @Override
    public void buy(SaleGuard guard, int items, LongConsumer onSale) throws InterruptedException {
      Stock stock = Stock.inMemory(items);
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        List<Future<?>> running = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
          running.add(
              pool.submit(
                  () -> {
                    Buyer.buyUntilSoldOut(guard, latchkey, stock, onSale);
                    return null;
                  }));
        }
        long deadline = System.nanoTime() + RUN_TIMEOUT.toNanos();
        for (Future<?> buyer : running) {
          buyer.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
      } catch (ExecutionException e) {
        throw new IllegalStateException("a buyer failed: " + OneLineErrors.describe(e), e);
      } catch (TimeoutException e) {
        throw new IllegalStateException(
            "the buyers did not sell out within " + Durations.format(RUN_TIMEOUT), e);
      } finally {
        pool.shutdownNow();
      }
    }
  }
}
