package io.latchkey.zookeeper;

import io.latchkey.spi.LatchStore;
import java.util.concurrent.CompletableFuture;

/**
 * Count-down latches: the count in one persistent node, changed by versioned writes ({@link
 * ZooKeeperCounters}) and deleted when it reaches zero.
 */
final class ZooKeeperLatchStore implements LatchStore {
  private final ZooKeeperCounters counters;

  ZooKeeperLatchStore(ZooKeeperCounters counters) {
    this.counters = counters;
  }

  @Override
  public CompletableFuture<Boolean> trySetCount(String name, long count) {
    return counters.update(
        ZooKeeperPaths.latch(name),
        counter ->
            counter.value() > 0
                ? new ZooKeeperCounters.Keep<>(false)
                : new ZooKeeperCounters.Put<>(count, true));
  }

  @Override
  public CompletableFuture<Long> countDown(String name) {
    return counters.update(
        ZooKeeperPaths.latch(name),
        counter -> {
          if (!counter.exists()) {
            return new ZooKeeperCounters.Keep<>(0L);
          }
          long next = counter.value() - 1;
          return next <= 0
              ? new ZooKeeperCounters.Remove<>(0L)
              : new ZooKeeperCounters.Put<>(next, next);
        });
  }

  @Override
  public CompletableFuture<Long> count(String name) {
    return counters.read(ZooKeeperPaths.latch(name)).thenApply(counter -> counter.value());
  }
}
