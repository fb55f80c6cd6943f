package io.latchkey.jdbc;

import io.latchkey.spi.ResourceType;
import io.latchkey.spi.Wakeup;
import io.latchkey.spi.WakeupBus;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wake-ups over PostgreSQL's LISTEN/NOTIFY, on one channel for all resources ({@code
 * <prefix>wakeups}): a releasing transaction calls {@code pg_notify} with a payload naming the
 * resource's key, the slots and the target owner, and PostgreSQL delivers it when (and only if) the
 * transaction commits. One dedicated connection per backend listens; its thread hands each
 * notification to the engine's listeners of that resource, which do not block.
 *
 * <p>A subscription is active once the listening connection has run {@code LISTEN}. If that
 * connection breaks, a new one listens after a pause; wake-ups sent in between are lost, which the
 * engine's bounded re-check covers.
 */
final class PostgresWakeups implements WakeupBus, WakeupPublisher, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PostgresWakeups.class);
  private static final int POLL_MILLIS = 500;
  private static final long RECONNECT_PAUSE_MILLIS = 500;

  /** Opens the listening connection. */
  @FunctionalInterface
  interface Opener {
    Connection open() throws SQLException;
  }

  private final String channel;
  private final Opener opener;
  private final Map<String, List<Consumer<Wakeup>>> listeners = new ConcurrentHashMap<>();
  private final Thread thread;
  private volatile CompletableFuture<Void> listening = new CompletableFuture<>();
  private volatile @Nullable Connection connection;
  private volatile boolean closed;

  PostgresWakeups(String tablePrefix, Opener opener) {
    this.channel = (tablePrefix + "wakeups").toLowerCase(Locale.ROOT);
    this.opener = opener;
    this.thread = new Thread(this::listen, "latchkey-pg-wakeups");
    thread.setDaemon(true);
    thread.start();
  }

  @Override
  public void publish(Connection connection, String resourceKey, Wakeup wakeup)
      throws SQLException {
    try (PreparedStatement notify = connection.prepareStatement(NOTIFY)) {
      notify.setString(1, channel);
      notify.setString(2, payload(resourceKey, wakeup));
      notify.execute();
    }
  }

  @Override
  public void publish(Writes writes, Connection connection, String resourceKey, Wakeup wakeup) {
    writes.add(NOTIFY, channel, payload(resourceKey, wakeup));
  }

  private static final String NOTIFY = "SELECT pg_notify(?, ?)";

  private static String payload(String resourceKey, Wakeup wakeup) {
    return resourceKey
        + " "
        + wakeup.slots()
        + (wakeup.targetOwner() == null ? "" : " " + wakeup.targetOwner());
  }

  @Override
  public CompletionStage<Subscription> subscribe(
      ResourceType type, String name, Consumer<Wakeup> listener) {
    String key = ResourceKeys.resource(type, name);
    listeners.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>()).add(listener);
    Subscription subscription =
        () -> {
          listeners.computeIfPresent(
              key,
              (k, list) -> {
                list.remove(listener);
                return list.isEmpty() ? null : list;
              });
          return CompletableFuture.completedFuture(null);
        };
    return listening.thenApply(active -> subscription);
  }

  private void listen() {
    while (!closed) {
      try (Connection listener = opener.open()) {
        connection = listener;
        listener.setAutoCommit(true);
        try (Statement statement = listener.createStatement()) {
          statement.execute("LISTEN " + channel);
        }
        listening.complete(null);
        NotificationReader reader = new NotificationReader(listener);
        while (!closed) {
          for (String payload : reader.next(POLL_MILLIS)) {
            deliver(payload);
          }
        }
      } catch (SQLException | RuntimeException e) {
        if (!closed) {
          LOG.debug("the connection listening for wake-ups on {} failed; reconnecting", channel, e);
          if (listening.isDone()) {
            listening = new CompletableFuture<>();
          }
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(RECONNECT_PAUSE_MILLIS));
        }
      } finally {
        connection = null;
      }
    }
  }

  private void deliver(String payload) {
    String[] parts = payload.split(" ", 3);
    if (parts.length < 2) {
      return;
    }
    List<Consumer<Wakeup>> subscribed = listeners.get(parts[0]);
    if (subscribed == null) {
      return;
    }
    Wakeup wakeup = new Wakeup(Integer.parseInt(parts[1]), parts.length == 3 ? parts[2] : null);
    for (Consumer<Wakeup> listener : subscribed) {
      try {
        listener.accept(wakeup);
      } catch (RuntimeException e) {
        LOG.warn("a wake-up listener failed", e);
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    listening.completeExceptionally(new IllegalStateException("the backend is closed"));
    Connection current = connection;
    if (current != null) {
      try {
        current.abort(Runnable::run);
      } catch (SQLException ignored) {
        // The thread ends at its next poll either way.
      }
    }
  }

  /**
   * Reads notifications through pgjdbc's {@code PGConnection}, by reflection: latchkey-jdbc does
   * not need the PostgreSQL driver to compile or to run on other databases, and the driver's
   * annotations would otherwise be needed on our compile path.
   */
  private static final class NotificationReader {
    private final Object connection;
    private final Method getNotifications;
    private final Method getParameter;

    NotificationReader(Connection listener) throws SQLException {
      try {
        Class<?> pgConnection = Class.forName("org.postgresql.PGConnection");
        this.connection = listener.unwrap(pgConnection);
        this.getNotifications = pgConnection.getMethod("getNotifications", int.class);
        this.getParameter =
            Class.forName("org.postgresql.PGNotification").getMethod("getParameter");
      } catch (ReflectiveOperationException e) {
        throw new SQLException("the PostgreSQL driver (pgjdbc) is needed for LISTEN", e);
      }
    }

    /** Waits up to {@code millis} for notifications; answers their payloads. */
    List<String> next(int millis) throws SQLException {
      try {
        Object[] notifications = (Object[]) getNotifications.invoke(connection, millis);
        if (notifications == null) {
          return List.of();
        }
        List<String> payloads = new java.util.ArrayList<>(notifications.length);
        for (Object notification : notifications) {
          payloads.add((String) getParameter.invoke(notification));
        }
        return payloads;
      } catch (InvocationTargetException e) {
        if (e.getCause() instanceof SQLException sql) {
          throw sql;
        }
        throw new SQLException("reading notifications failed", e.getCause());
      } catch (IllegalAccessException e) {
        throw new SQLException("reading notifications failed", e);
      }
    }
  }
}
