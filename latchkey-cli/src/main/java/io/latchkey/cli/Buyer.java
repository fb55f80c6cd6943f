package io.latchkey.cli;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedSemaphore;
import io.latchkey.Latchkey;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;
import org.jspecify.annotations.Nullable;

/**
 * One buyer of the flash sale, a thread in the demo's JVM or in a worker process: buys one item at
 * a time until the stock is gone. A purchase reads the stock, "checks out" (a short pause, standing
 * in for the payment and database round trips of a real shop) and writes the stock back, so that
 * without mutual exclusion two buyers sell the same item.
 */
final class Buyer {
  private static final long CHECKOUT_NANOS = 200_000;
  private static final Duration WAIT = Duration.ofSeconds(30);

  private Buyer() {}

  /**
   * Buys until the stock (or, with {@link SaleGuard#SEMAPHORE}, the semaphore's permits) is gone.
   *
   * @param onSale told of each item sold, with how long the buyer waited for its lock or permit
   */
  static void buyUntilSoldOut(SaleGuard guard, Latchkey latchkey, Stock stock, LongConsumer onSale)
      throws InterruptedException {
    @Nullable DistributedLock lock =
        switch (guard) {
          case LOCK -> latchkey.lock(guard.resource());
          case FAIR_LOCK -> latchkey.fairLock(guard.resource());
          default -> null;
        };
    if (guard == SaleGuard.SEMAPHORE) {
      DistributedSemaphore permits = latchkey.semaphore(guard.resource());
      while (true) {
        long asked = System.nanoTime();
        if (!permits.tryAcquire(1)) {
          return;
        }
        long waited = System.nanoTime() - asked;
        LockSupport.parkNanos(CHECKOUT_NANOS);
        onSale.accept(waited);
      }
    }
    while (true) {
      long asked = System.nanoTime();
      if (lock != null && !lock.tryLock(WAIT)) {
        throw new IllegalStateException(
            "a buyer could not get '" + lock.name() + "' within " + Durations.format(WAIT));
      }
      long waited = System.nanoTime() - asked;
      try {
        int left = stock.read();
        if (left <= 0) {
          return;
        }
        LockSupport.parkNanos(CHECKOUT_NANOS);
        stock.write(left - 1);
      } finally {
        if (lock != null) {
          lock.unlock();
        }
      }
      onSale.accept(waited);
    }
  }
}
