package io.latchkey.zookeeper;

import io.latchkey.spi.AcquireResult;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.zookeeper.KeeperException;
import org.jspecify.annotations.Nullable;

/**
 * Whether the client is connected to the ensemble now and, while it is not, a stage that completes
 * when it is back. A waiting acquire asks before it sends anything: while the connection is down it
 * answers "busy until the connection is back" instead of sending a call that could only fail (or,
 * queued by Curator, go out late), so that a blip does not fail a wait that has time left.
 *
 * <p>The connection's state is Curator's flag, read each time, not Curator's state listener, which
 * reports later on a thread of its own; the listener only opens the gate early ({@link
 * #reopened()}). Curator sets the flag on ZooKeeper's event thread, from the same disconnection
 * event that the watches hear; but ZooKeeper hands that event to Curator and to the watches in no
 * set order, and an attempt that a watch wakes runs at once. So a watch that hears the connection
 * go closes the gate first ({@link #heardDisconnection()}): else the attempt would read the flag
 * before Curator cleared it and send a call on a connection that is gone, whose answer
 * (CONNECTIONLOSS) only comes when the client's next attempt to reconnect fails, one to two seconds
 * later, as late as a short operation timeout. A stage is completed on the backend's executor,
 * never on a Curator thread.
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
  // Guarded by this.
  private @Nullable CompletableFuture<Void> back;

  /**
   * A watch heard the connection go and Curator's flag may not say so yet: set until the flag says
   * it is down (from then on the flag tells) or the connection is back ({@link #reopened()}).
   */
  // Guarded by this.
  private boolean heardDown;

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
    boolean up = connected.getAsBoolean();
    CompletableFuture<Void> opened;
    synchronized (this) {
      if (!up || heardDown) {
        if (!up) {
          heardDown = false;
        }
        if (back == null) {
          back = new CompletableFuture<>();
        }
        return back;
      }
      // Up, and no watch heard otherwise: whoever waits may try. A disconnection heard from now on
      // still closes the gate (this does not clear it, unlike reopened()).
      opened = back;
      back = null;
    }
    open(opened);
    return null;
  }

  /**
   * A watch heard ZooKeeper's disconnection event: the gate is closed from now on, even while
   * Curator's flag, which the same event clears, still says connected. Only for that event: it
   * reaches the watches and Curator on the one event thread, before the reconnection's event (after
   * which Curator reports the connection back), so the gate cannot stay closed behind a connection
   * that is back. A session's expiry comes after a disconnection (which closed the gate already)
   * and on the event thread of a handle that Curator replaces at once, so its order against the new
   * handle's reconnection is not known: it does not close the gate.
   */
  synchronized void heardDisconnection() {
    heardDown = true;
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
      heardDown = false;
    }
    open(opened);
  }

  /** Completes a stage of waiters for the connection, on the backend's executor. */
  private void open(@Nullable CompletableFuture<Void> opened) {
    if (opened != null) {
      try {
        executor.execute(() -> opened.complete(null));
      } catch (RejectedExecutionException closing) {
        opened.complete(null);
      }
    }
  }

  /**
   * A waiting attempt through a lost connection (the engine tries again within the wait): while the
   * connection is down it sends nothing and answers {@code offline}, and so it does when it fails
   * on the connection, so that a blip does not end the wait. Only for an attempt whose calls are
   * safe to make again after such a failure; one that is not (a write that may have been applied,
   * and would count twice) marks its failure {@link NotRepeatable}, which fails the attempt, as
   * does any failure that is not the connection's.
   *
   * @param attempt sends the attempt's calls
   * @param offline the answer "busy until the connection is back", given the stage that completes
   *     then, or null if the client reports it back already (try again shortly)
   * @return the attempt's answer, or {@code offline}'s
   */
  <T> CompletableFuture<T> waiting(
      Supplier<CompletableFuture<T>> attempt,
      Function<@Nullable CompletableFuture<Void>, T> offline) {
    CompletableFuture<Void> down = whileDown();
    if (down != null) {
      return CompletableFuture.completedFuture(offline.apply(down));
    }
    return attempt
        .get()
        .exceptionallyCompose(
            failure -> {
              Throwable cause = cause(failure);
              if (isNotRepeatable(failure) || !isConnectionLoss(cause)) {
                return CompletableFuture.failedFuture(cause);
              }
              return CompletableFuture.completedFuture(offline.apply(whileDown()));
            });
  }

  /**
   * An acquire attempt's answer while the connection is down ({@link #waiting}'s {@code offline}).
   *
   * @param back completes when the connection is back, or null if the client reports it back
   * @return busy until then
   */
  static AcquireResult busyUntilBack(@Nullable CompletableFuture<Void> back) {
    return back == null
        ? AcquireResult.busy(RECONNECTED_RETRY_MILLIS)
        : AcquireResult.busyUntil(back);
  }

  /**
   * @param failure a call's failure, perhaps wrapped (in {@link CompletionException}, {@link
   *     NotRepeatable})
   * @return the failure itself
   */
  static Throwable cause(Throwable failure) {
    Throwable cause = unwrap(failure);
    Throwable inner = cause instanceof NotRepeatable ? cause.getCause() : null;
    return inner != null ? inner : cause;
  }

  private static boolean isNotRepeatable(Throwable failure) {
    return unwrap(failure) instanceof NotRepeatable;
  }

  private static Throwable unwrap(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  /**
   * Wraps the failure of a write that must not be repeated (it adds a hold or takes permits, or it
   * claims a node that is not a place this client keeps): the call fails with the cause, even for a
   * waiter ({@link #waiting}).
   */
  static final class NotRepeatable extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NotRepeatable(Throwable cause) {
      super(unwrap(cause));
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }

  /**
   * @param failure a call's failure
   * @return whether it is the connection's (lost, or the session gone or moved): the call may or
   *     may not have been applied, and the connection says nothing about the lock
   */
  static boolean isConnectionLoss(Throwable failure) {
    Throwable cause = unwrap(failure);
    if (!(cause instanceof KeeperException keeper)) {
      return false;
    }
    return switch (keeper.code()) {
      case CONNECTIONLOSS, SESSIONEXPIRED, SESSIONMOVED, OPERATIONTIMEOUT -> true;
      default -> false;
    };
  }
}
