package io.latchkey.zookeeper;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.zookeeper.KeeperException;
import org.jspecify.annotations.Nullable;

/**
 * Whether the client is connected to the ensemble now and, while it is not, a stage that completes
 * when it is back. A waiting acquire asks before it sends anything: while the connection is down it
 * answers "busy until the connection is back" instead of sending a call that could only fail (or,
 * queued by Curator, go out late), so that a blip does not fail a wait that has time left.
 *
 * <p>The connection's state is read from the ZooKeeper handle each time (Curator updates it on
 * ZooKeeper's event thread before any watch hears of the disconnection), not from Curator's state
 * listener, which reports later on a thread of its own; the listener only opens the gate early
 * ({@link #reopened()}). A stage is completed on the backend's executor, never on a Curator thread.
 */
final class ConnectionGate {
  /**
   * How soon a call that failed on the connection is tried again while the client already reports
   * it connected again (the failure came before the client noticed the blip: nothing to wait for).
   */
  static final long RECONNECTED_RETRY_MILLIS = 50;

  private final BooleanSupplier connected;
  private final Executor executor;
  private final ScheduledExecutorService scheduler;
  private @Nullable CompletableFuture<Void> back;

  ConnectionGate(BooleanSupplier connected, Executor executor, ScheduledExecutorService scheduler) {
    this.connected = connected;
    this.executor = executor;
    this.scheduler = scheduler;
  }

  /**
   * @return null if the client is connected now; else a stage that completes once it is connected
   *     again (as Curator reports it, or as the next call of this method finds it)
   */
  @Nullable CompletableFuture<Void> whileDown() {
    if (connected.getAsBoolean()) {
      reopened();
      return null;
    }
    synchronized (this) {
      if (back == null) {
        back = new CompletableFuture<>();
      }
      return back;
    }
  }

  /**
   * Runs an action once the connection is back: when the gate opens again, or after {@link
   * #RECONNECTED_RETRY_MILLIS} if the client reports it connected now. Nothing runs if the client
   * is closing (its session ends, which is what the action would have waited for).
   *
   * @param action a short step that sends a call; it runs on the backend's executor or scheduler
   */
  // The action routes its own outcome.
  @SuppressWarnings("FutureReturnValueIgnored")
  void whenBack(Runnable action) {
    CompletableFuture<Void> reopened = whileDown();
    try {
      if (reopened != null) {
        reopened.thenRun(action);
      } else {
        scheduler.schedule(action, RECONNECTED_RETRY_MILLIS, TimeUnit.MILLISECONDS);
      }
    } catch (RejectedExecutionException closing) {
      // The client is closing; its session ends and takes its nodes with it.
    }
  }

  /** The connection is back (or the session was replaced): whoever waits for it tries again. */
  void reopened() {
    CompletableFuture<Void> opened;
    synchronized (this) {
      opened = back;
      back = null;
    }
    if (opened != null) {
      try {
        executor.execute(() -> opened.complete(null));
      } catch (RejectedExecutionException closing) {
        opened.complete(null);
      }
    }
  }

  /**
   * @param failure a call's failure
   * @return whether it is the connection's (lost, or the session gone or moved): the call may or
   *     may not have been applied, and the connection says nothing about the lock
   */
  static boolean isConnectionLoss(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (!(cause instanceof KeeperException keeper)) {
      return false;
    }
    return switch (keeper.code()) {
      case CONNECTIONLOSS, SESSIONEXPIRED, SESSIONMOVED, OPERATIONTIMEOUT -> true;
      default -> false;
    };
  }
}
