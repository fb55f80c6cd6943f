package io.latchkey.zookeeper;

import java.nio.charset.StandardCharsets;
import java.util.ConcurrentModificationException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.jspecify.annotations.Nullable;

/**
 * Counters in a node's data (a decimal number), changed by versioned writes: read the value and
 * version, compute, write if the version is still the one read, else read again. Semaphores, leased
 * semaphores' totals and latches keep their numbers this way.
 */
final class ZooKeeperCounters {
  private static final int ATTEMPTS = 64;

  private final ZooKeeperCalls calls;

  ZooKeeperCounters(ZooKeeperCalls calls) {
    this.calls = calls;
  }

  /** A counter as read: its value and version, or absent. */
  record Counter(boolean exists, long value, int version) {}

  /** What to do with a counter as read. */
  sealed interface Change<T> permits Keep, Put, Remove {}

  /** Leave the counter alone and answer. */
  record Keep<T>(T answer) implements Change<T> {}

  /** Set (or create) the counter and answer. */
  record Put<T>(long value, T answer) implements Change<T> {}

  /** Delete the counter and answer. */
  record Remove<T>(T answer) implements Change<T> {}

  /**
   * @param path the counter's node
   * @return its value, or absent
   */
  CompletableFuture<Counter> read(String path) {
    return calls
        .read(path)
        .thenApply(
            read ->
                read == null
                    ? new Counter(false, 0, -1)
                    : new Counter(true, parse(read.data()), read.stat().getVersion()));
  }

  /**
   * Applies a change as one atomic step: the decision is made on the value it replaces.
   *
   * @param path the counter's node
   * @param decide what to do with the counter as read
   * @return the decision's answer once applied
   */
  <T> CompletableFuture<T> update(String path, Function<Counter, Change<T>> decide) {
    return update(path, decide, false, 0);
  }

  /**
   * {@link #update}, for an attempt that a waiter may make again after it failed on the connection
   * ({@link ConnectionGate#waiting}): a failure of the change, which may have been applied, is
   * marked {@link ConnectionGate.NotRepeatable}; a failure of the read changed nothing.
   */
  <T> CompletableFuture<T> updateOnce(String path, Function<Counter, Change<T>> decide) {
    return update(path, decide, true, 0);
  }

  private <T> CompletableFuture<T> update(
      String path, Function<Counter, Change<T>> decide, boolean changeOnce, int round) {
    if (round >= ATTEMPTS) {
      return CompletableFuture.failedFuture(
          new ConcurrentModificationException(path + " kept changing"));
    }
    return read(path)
        .thenCompose(
            counter -> {
              Change<T> change = decide.apply(counter);
              CompletableFuture<Boolean> applied;
              T answer;
              if (change instanceof Keep<T> keep) {
                return CompletableFuture.completedFuture(keep.answer());
              } else if (change instanceof Put<T> put) {
                answer = put.answer();
                byte[] data = format(put.value());
                applied =
                    counter.exists()
                        ? calls
                            .write(path, data, counter.version())
                            .thenApply(code -> code == KeeperException.Code.OK)
                        : calls
                            .create(path, data, CreateMode.PERSISTENT)
                            .thenApply(ZooKeeperCalls.Created::ok);
              } else {
                Remove<T> remove = (Remove<T>) change;
                answer = remove.answer();
                applied =
                    calls
                        .delete(path, counter.version())
                        .thenApply(code -> code == KeeperException.Code.OK);
              }
              if (changeOnce) {
                applied =
                    applied.exceptionallyCompose(
                        failure ->
                            CompletableFuture.failedFuture(
                                new ConnectionGate.NotRepeatable(failure)));
              }
              return applied.thenCompose(
                  ok ->
                      ok
                          ? CompletableFuture.completedFuture(answer)
                          : update(path, decide, changeOnce, round + 1));
            });
  }

  /**
   * Creates a counter that does not exist yet.
   *
   * @param path the counter's node
   * @param value its first value
   * @return true if it did not exist and now does
   */
  CompletableFuture<Boolean> setOnce(String path, long value) {
    return update(path, counter -> counter.exists() ? new Keep<>(false) : new Put<>(value, true));
  }

  /**
   * Adds to a permit count, creating it if needed, unless the result leaves the range of an int.
   *
   * @param path the counter's node
   * @param what what the count is, for the refusal's message
   * @param delta the change
   * @return completes when done, or fails with {@link IllegalArgumentException} (nothing changed)
   */
  CompletableFuture<Void> addPermits(String path, String what, int delta) {
    return update(
            path,
            counter -> {
              long next = counter.value() + delta;
              if (next > Integer.MAX_VALUE || next < Integer.MIN_VALUE) {
                throw new IllegalArgumentException(
                    what + " would have " + next + " permits, outside the range of an int");
              }
              return new Put<>(next, true);
            })
        .thenApply(done -> null);
  }

  static long parse(byte @Nullable [] data) {
    if (data == null || data.length == 0) {
      return 0;
    }
    try {
      return Long.parseLong(new String(data, StandardCharsets.UTF_8).trim());
    } catch (NumberFormatException e) {
      throw new IllegalStateException("not a latchkey counter: " + e.getMessage(), e);
    }
  }

  static byte[] format(long value) {
    return Long.toString(value).getBytes(StandardCharsets.UTF_8);
  }
}
