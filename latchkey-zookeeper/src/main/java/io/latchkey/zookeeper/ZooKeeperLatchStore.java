package io.latchkey.zookeeper;

import io.latchkey.spi.LatchStore;
import io.latchkey.spi.WaitingAttempts;
import java.util.concurrent.CompletableFuture;

/**
 * Count-down latches: the count in one persistent node, changed by versioned writes ({@link
 * ZooKeeperCounters}) and deleted when it reaches zero.
 *
 * <p>A read of the count that an awaiting caller makes ({@link WaitingAttempts}) goes through the
 * connection gate ({@link ConnectionGate#waiting}): while the connection is down, or when the read
 * fails on it, it answers "not zero yet" ({@link #NOT_YET}) and the engine reads again within the
 * wait, so that a blip does not end an await.
 */
final class ZooKeeperLatchStore implements LatchStore {
  /** What an awaiting caller's read answers while the count cannot be read: not zero. */
  private static final long NOT_YET = 1;

  private final ZooKeeperCounters counters;
  private final ConnectionGate gate;

  ZooKeeperLatchStore(ZooKeeperCounters counters, ConnectionGate gate) {
    this.counters = counters;
    this.gate = gate;
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
    if (!WaitingAttempts.take()) {
      return read(name);
    }
    return gate.waiting(() -> read(name), back -> NOT_YET);
  }

  private CompletableFuture<Long> read(String name) {
    return counters.read(ZooKeeperPaths.latch(name)).thenApply(counter -> counter.value());
  }
}
