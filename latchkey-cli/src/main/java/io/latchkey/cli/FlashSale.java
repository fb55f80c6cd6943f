package io.latchkey.cli;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedSemaphore;
import io.latchkey.Latchkey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The flash sale ("seckill"): buyers each take one item at a time from a shared stock until it is
 * gone. The stock is read, the buyer "checks out" (a short pause, standing in for the payment and
 * database round trips of a real shop), and the stock is written back: an unsynchronised
 * read-modify-write, so without mutual exclusion two buyers sell the same item.
 *
 * <p>The guards: none; a reentrant lock around the read-modify-write; a fair lock around it; and a
 * semaphore whose permits <em>are</em> the stock, so a buyer that gets a permit has an item and no
 * lock is needed at all.
 */
final class FlashSale {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final long CHECKOUT_NANOS = 200_000;

  enum Guard {
    NONE("no lock"),
    LOCK("reentrant lock"),
    FAIR_LOCK("fair lock"),
    SEMAPHORE("semaphore checkout");

    private final String label;

    Guard(String label) {
      this.label = label;
    }

    String label() {
      return label;
    }
  }

  record Result(
      Guard guard,
      long sold,
      long oversold,
      double throughputPerSecond,
      long p50WaitNanos,
      long p99WaitNanos,
      long elapsedNanos) {}

  private final Latchkey latchkey;
  private final int stock;
  private final int threads;

  FlashSale(Latchkey latchkey, int stock, int threads) {
    this.latchkey = latchkey;
    this.stock = stock;
    this.threads = threads;
  }

  Result run(Guard guard, LongConsumer progress) {
    String name =
        "demo/flash-sale/"
            + guard.name().toLowerCase(java.util.Locale.ROOT)
            + "/"
            + System.nanoTime();
    Stock shared = new Stock(stock);
    AtomicLong sold = new AtomicLong();
    @Nullable DistributedSemaphore semaphore = null;
    if (guard == Guard.SEMAPHORE) {
      semaphore = latchkey.semaphore(name);
      semaphore.trySetPermits(stock);
    }
    @Nullable DistributedLock lock =
        switch (guard) {
          case LOCK -> latchkey.lock(name);
          case FAIR_LOCK -> latchkey.fairLock(name);
          default -> null;
        };
    @Nullable DistributedSemaphore permits = semaphore;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long start = System.nanoTime();
    List<Future<long[]>> buyers = new ArrayList<>();
    try {
      for (int i = 0; i < threads; i++) {
        buyers.add(pool.submit(() -> buy(guard, lock, permits, shared, sold, progress)));
      }
      List<long[]> waits = new ArrayList<>();
      for (Future<long[]> buyer : buyers) {
        waits.add(buyer.get());
      }
      long elapsed = System.nanoTime() - start;
      long[] all = waits.stream().flatMapToLong(Arrays::stream).sorted().toArray();
      long total = sold.get();
      return new Result(
          guard,
          total,
          Math.max(0, total - stock),
          total / (elapsed / 1e9),
          percentile(all, 0.50),
          percentile(all, 0.99),
          elapsed);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("the demo was interrupted", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("a buyer failed: " + OneLineErrors.describe(e), e);
    } finally {
      pool.shutdownNow();
    }
  }

  /** One buyer: buys until the stock is gone; returns how long each purchase waited. */
  private long[] buy(
      Guard guard,
      @Nullable DistributedLock lock,
      @Nullable DistributedSemaphore permits,
      Stock shared,
      AtomicLong sold,
      LongConsumer progress)
      throws InterruptedException {
    List<Long> waits = new ArrayList<>();
    while (true) {
      long asked = System.nanoTime();
      if (permits != null) {
        if (!permits.tryAcquire(1)) {
          break;
        }
        waits.add(System.nanoTime() - asked);
        LockSupport.parkNanos(CHECKOUT_NANOS);
        progress.accept(sold.incrementAndGet());
        continue;
      }
      if (lock != null && !lock.tryLock(WAIT)) {
        throw new IllegalStateException("a buyer could not get the lock within " + WAIT);
      }
      waits.add(System.nanoTime() - asked);
      try {
        int left = shared.read();
        if (left <= 0) {
          break;
        }
        LockSupport.parkNanos(CHECKOUT_NANOS);
        shared.write(left - 1);
        progress.accept(sold.incrementAndGet());
      } finally {
        if (lock != null) {
          lock.unlock();
        }
      }
    }
    return waits.stream().mapToLong(Long::longValue).toArray();
  }

  private static long percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    int index = (int) Math.ceil(p * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  /** The shop's stock: deliberately not thread-safe beyond visibility. */
  private static final class Stock {
    private volatile int left;

    Stock(int left) {
      this.left = left;
    }

    int read() {
      return left;
    }

    void write(int value) {
      left = value;
    }
  }
}
