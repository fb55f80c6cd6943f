package io.latchkey.zookeeper;

import io.latchkey.spi.SemaphoreStore;
import java.util.concurrent.CompletableFuture;

/**
 * Counting semaphores without owners: the available permits in one persistent node, changed by
 * versioned writes ({@link ZooKeeperCounters}). Permits are taken until given back, as with {@link
 * java.util.concurrent.Semaphore}, so they are not bound to the session.
 */
final class ZooKeeperSemaphoreStore implements SemaphoreStore {
  private final ZooKeeperCounters counters;

  ZooKeeperSemaphoreStore(ZooKeeperCounters counters) {
    this.counters = counters;
  }

  @Override
  public CompletableFuture<Boolean> trySetPermits(String name, int permits) {
    return counters.setOnce(ZooKeeperPaths.semaphore(name), permits);
  }

  @Override
  public CompletableFuture<Void> addPermits(String name, int delta) {
    return counters.addPermits(ZooKeeperPaths.semaphore(name), "semaphore '" + name + "'", delta);
  }

  @Override
  public CompletableFuture<Boolean> tryAcquire(String name, int permits) {
    return counters.update(
        ZooKeeperPaths.semaphore(name),
        counter ->
            counter.value() >= permits
                ? new ZooKeeperCounters.Put<>(counter.value() - permits, true)
                : new ZooKeeperCounters.Keep<>(false));
  }

  @Override
  public CompletableFuture<Integer> availablePermits(String name) {
    return counters
        .read(ZooKeeperPaths.semaphore(name))
        .thenApply(counter -> (int) counter.value());
  }
}
