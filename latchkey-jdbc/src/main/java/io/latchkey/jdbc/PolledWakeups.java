package io.latchkey.jdbc;

import io.latchkey.spi.ResourceType;
import io.latchkey.spi.Wakeup;
import io.latchkey.spi.WakeupBus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wake-ups for databases without a push channel (MariaDB, H2). A releasing transaction records its
 * wake-up in the resource's row ({@code wake_seq}, {@code wake_slots}, {@code wake_owner}), so it
 * exists if and only if the release commits. While this client has waiters, one query per interval
 * (about {@value #POLL_MILLIS} ms, jittered) reads the rows of the resources they wait for, and a
 * sequence number that moved is handed to them as a wake-up; several wake-ups between two reads
 * wake every waiter of the resource once. Between waits nothing is read. A release by this client
 * of a resource that this client's own waiters wait on reads its sequence right after the commit,
 * so that hand-offs inside one client do not wait for the poll.
 *
 * <p>The backend does not declare {@link io.latchkey.Feature#WAKEUP_PUSH}: the engine's own
 * back-off still bounds every wait, and this only shortens it.
 */
final class PolledWakeups implements WakeupBus, WakeupPublisher, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PolledWakeups.class);
  static final long POLL_MILLIS = 40;

  private final Transactions transactions;
  private final Sql sql;
  private final ScheduledExecutorService scheduler;
  private final Map<String, Watched> watched = new ConcurrentHashMap<>();
  private boolean polling;
  private volatile boolean closed;

  PolledWakeups(Transactions transactions, Sql sql, ScheduledExecutorService scheduler) {
    this.transactions = transactions;
    this.sql = sql;
    this.scheduler = scheduler;
  }

  @Override
  public void publish(Connection connection, String resourceKey, Wakeup wakeup)
      throws SQLException {
    try (PreparedStatement update = connection.prepareStatement(sql.recordWakeup)) {
      update.setInt(1, wakeup.slots());
      update.setString(2, wakeup.targetOwner());
      update.setString(3, resourceKey);
      update.executeUpdate();
    }
    if (watched.containsKey(resourceKey)) {
      // A waiter of this client waits on it: read the new sequence as soon as the release has
      // committed instead of at the next poll (tens of ms later), which would otherwise pace every
      // hand-off between this client's own threads.
      Transactions.afterCommit(() -> readSoon(resourceKey));
    }
  }

  // The handler routes every outcome itself (a failure leaves it to the next poll).
  @SuppressWarnings("FutureReturnValueIgnored")
  private void readSoon(String key) {
    if (closed) {
      return;
    }
    transactions
        .submit("reading a wake-up", c -> readSequences(c, List.of(key)))
        .whenComplete(
            (sequences, failure) -> {
              if (failure != null) {
                LOG.debug("reading a wake-up failed; the next poll covers it", failure);
              } else {
                sequences.forEach(this::deliver);
              }
            });
  }

  @Override
  public CompletionStage<Subscription> subscribe(
      ResourceType type, String name, Consumer<Wakeup> listener) {
    String key = ResourceKeys.resource(type, name);
    return transactions
        .submit("subscription to '" + name + "'", c -> readSequences(c, List.of(key)))
        .thenApply(
            sequences -> {
              Watched entry = watched.computeIfAbsent(key, k -> new Watched());
              entry.listeners.add(listener);
              entry.seenAtLeast(sequences.get(key));
              startPolling();
              return () -> {
                watched.computeIfPresent(
                    key,
                    (k, w) -> {
                      w.listeners.remove(listener);
                      return w.listeners.isEmpty() ? null : w;
                    });
                return CompletableFuture.completedFuture(null);
              };
            });
  }

  private synchronized void startPolling() {
    if (!polling && !closed) {
      polling = true;
      scheduleNext();
    }
  }

  // The timer's future is not needed: closing the client's scheduler ends the polling.
  @SuppressWarnings("FutureReturnValueIgnored")
  private void scheduleNext() {
    long delay = POLL_MILLIS / 2 + ThreadLocalRandom.current().nextLong(POLL_MILLIS);
    try {
      scheduler.schedule(this::poll, delay, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException schedulerGone) {
      synchronized (this) {
        polling = false;
      }
    }
  }

  /** Runs on the scheduler: hands the read to the blocking executor and returns at once. */
  // The handler routes every outcome itself (a failure is logged, and the next poll follows).
  @SuppressWarnings("FutureReturnValueIgnored")
  private void poll() {
    List<String> keys;
    synchronized (this) {
      keys = new ArrayList<>(watched.keySet());
      if (keys.isEmpty() || closed) {
        polling = false;
        return;
      }
    }
    transactions
        .submit("polling for wake-ups", c -> readSequences(c, keys))
        .whenComplete(
            (sequences, failure) -> {
              if (failure != null) {
                LOG.debug("polling for wake-ups failed; the engine's back-off covers it", failure);
              } else {
                sequences.forEach(this::deliver);
              }
              scheduleNext();
            });
  }

  private void deliver(String key, Sequence sequence) {
    Watched entry = watched.get(key);
    if (entry == null) {
      return;
    }
    long missed = entry.advanceTo(sequence.value());
    if (missed <= 0) {
      return;
    }
    Wakeup delivered = missed == 1 ? sequence.wakeup() : Wakeup.of(Wakeup.ALL);
    for (Consumer<Wakeup> listener : entry.listeners) {
      try {
        listener.accept(delivered);
      } catch (RuntimeException e) {
        LOG.warn("a wake-up listener failed", e);
      }
    }
  }

  private Map<String, Sequence> readSequences(Connection c, List<String> keys) throws SQLException {
    Map<String, Sequence> sequences = new java.util.HashMap<>();
    try (PreparedStatement select = c.prepareStatement(sql.readWakeups(keys.size()))) {
      for (int i = 0; i < keys.size(); i++) {
        select.setString(i + 1, keys.get(i));
      }
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          sequences.put(
              rs.getString(1),
              new Sequence(rs.getLong(2), new Wakeup(rs.getInt(3), rs.getString(4))));
        }
      }
    }
    return sequences;
  }

  @Override
  public void close() {
    closed = true;
    watched.clear();
  }

  /** The last wake-up recorded for a resource, and its number. */
  private record Sequence(long value, Wakeup wakeup) {}

  /** A watched resource: its listeners and the last sequence number handed to them. */
  private static final class Watched {
    final List<Consumer<Wakeup>> listeners = new CopyOnWriteArrayList<>();
    private long seen = -1;

    synchronized void seenAtLeast(@Nullable Sequence sequence) {
      seen = Math.max(seen, sequence == null ? 0 : sequence.value());
    }

    /** Moves to {@code sequence}; answers how many wake-ups were passed. */
    synchronized long advanceTo(long sequence) {
      if (sequence <= seen) {
        return 0;
      }
      long missed = sequence - seen;
      seen = sequence;
      return missed;
    }
  }
}
