package io.latchkey.zookeeper;

import io.latchkey.spi.SemaphoreStore;
import io.latchkey.spi.WaitingAttempts;
import java.util.concurrent.CompletableFuture;

/**
 * Counting semaphores without owners: the available permits in one persistent node, changed by
 * versioned writes ({@link ZooKeeperCounters}). Permits are taken until given back, as with {@link
 * java.util.concurrent.Semaphore}, so they are not bound to the session.
 *
 * <p>An attempt of a wait ({@link WaitingAttempts}) goes through the connection gate ({@link
 * ConnectionGate#waiting}): while the connection is down, or when its read fails on it, it answers
 * "not taken" and the engine tries again within the wait. Its write is not made again: one that
 * failed on the connection may have taken the permits, which nobody could then give back, so its
 * failure fails the wait as before (the window is one round trip, once permits are free).
 */
final class ZooKeeperSemaphoreStore implements SemaphoreStore {
  private final ZooKeeperCounters counters;
  private final ConnectionGate gate;

  ZooKeeperSemaphoreStore(ZooKeeperCounters counters, ConnectionGate gate) {
    this.counters = counters;
    this.gate = gate;
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
    String path = ZooKeeperPaths.semaphore(name);
    if (!WaitingAttempts.take()) {
      return counters.update(path, counter -> take(counter, permits));
    }
    return gate.waiting(
        () -> counters.updateOnce(path, counter -> take(counter, permits)), back -> false);
  }

  private static ZooKeeperCounters.Change<Boolean> take(
      ZooKeeperCounters.Counter counter, int permits) {
    return counter.value() >= permits
        ? new ZooKeeperCounters.Put<>(counter.value() - permits, true)
        : new ZooKeeperCounters.Keep<>(false);
  }

  @Override
  public CompletableFuture<Integer> availablePermits(String name) {
    return counters
        .read(ZooKeeperPaths.semaphore(name))
        .thenApply(counter -> (int) counter.value());
  }
}
