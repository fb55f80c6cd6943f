package io.latchkey.internal;

import io.latchkey.memory.ManualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A {@link ScheduledExecutorService} on a {@link ManualTicker}: nothing runs until the test moves
 * the clock, and then everything runs on the test's own thread, in order.
 *
 * <p>Contract:
 *
 * <ul>
 *   <li>{@code schedule}, {@code scheduleAtFixedRate} and {@code scheduleWithFixedDelay} record the
 *       task as due at the ticker's reading plus the delay (a delay of zero or less: due now). They
 *       never run it.
 *   <li>{@link #advance} moves the clock forward by the given amount. On the way it stops at the
 *       due time of each task that falls due, sets the clock to exactly that time and runs the task
 *       on the calling thread: tasks run in order of due time, tasks due together in the order they
 *       were scheduled, and tasks scheduled by running tasks run in the same call if they fall due
 *       within it. The clock never goes back: a task recorded as due in the past runs at the
 *       current reading. {@link #runDue} is {@code advance(Duration.ZERO)}.
 *   <li>A fixed-rate task is next due one period after its previous due time; a fixed-delay task
 *       one delay after the clock reading when its run ended. A periodic task that throws is not
 *       run again and its future fails with the exception, as in the JDK.
 *   <li>{@link #execute} (and so {@code submit}, {@code invokeAll}, {@code invokeAny}) runs the
 *       task at once on the calling thread: a hand-off to this executor never waits for the clock.
 *   <li>Cancelling a future removes its task; a cancelled periodic task does not run again.
 *   <li>{@link #shutdown} refuses new tasks and drops periodic ones; one-shot tasks already
 *       recorded still run when they fall due (the default of {@link
 *       java.util.concurrent.ScheduledThreadPoolExecutor}). {@link #shutdownNow} drops every task
 *       and returns them. Once shut down and with nothing left to run the executor is terminated;
 *       {@link #awaitTermination} reports that state at once, since no time passes by itself.
 * </ul>
 *
 * <p>Tasks may be scheduled and cancelled from any thread (a backend's thread, for instance); the
 * clock should be moved by one thread at a time.
 */
final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {
  private final ManualTicker ticker;
  private final PriorityQueue<Task<?>> queue = new PriorityQueue<>();
  private long sequence;
  private int running;
  private boolean shutdown;

  ManualScheduler(ManualTicker ticker) {
    this.ticker = ticker;
  }

  /**
   * Moves the clock forward by {@code by}, running every task that falls due on the way.
   *
   * @param by how far to move; not negative
   */
  void advance(Duration by) {
    if (by.isNegative()) {
      throw new IllegalArgumentException("time does not go back: " + by);
    }
    long target = ticker.nanoTime() + by.toNanos();
    while (true) {
      Task<?> next;
      synchronized (this) {
        next = queue.peek();
        if (next == null || next.due - target > 0) {
          break;
        }
        queue.poll();
        running++;
      }
      try {
        moveTo(next.due);
        next.runOnce();
      } finally {
        synchronized (this) {
          running--;
        }
      }
    }
    moveTo(target);
  }

  /** Runs every task due at the current reading, without moving the clock. */
  void runDue() {
    advance(Duration.ZERO);
  }

  /**
   * @return how long until the earliest recorded task is due (zero if it is overdue), or empty if
   *     none is recorded
   */
  synchronized Optional<Duration> nextDelay() {
    Task<?> next = queue.peek();
    return next == null
        ? Optional.empty()
        : Optional.of(Duration.ofNanos(Math.max(0, next.due - ticker.nanoTime())));
  }

  /**
   * @return the number of recorded tasks, periodic ones included
   */
  synchronized int pendingTasks() {
    return queue.size();
  }

  private void moveTo(long time) {
    long ahead = time - ticker.nanoTime();
    if (ahead > 0) {
      ticker.advance(Duration.ofNanos(ahead));
    }
  }

  private synchronized <V> Task<V> enqueue(Task<V> task) {
    if (shutdown) {
      throw new RejectedExecutionException("the manual scheduler is shut down");
    }
    queue.add(task);
    return task;
  }

  // ---- ScheduledExecutorService ----

  @Override
  public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    return enqueue(new Task<>(Executors.callable(command, null), unit.toNanos(delay), 0));
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
    return enqueue(new Task<>(callable, unit.toNanos(delay), 0));
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(
      Runnable command, long initialDelay, long period, TimeUnit unit) {
    return enqueue(
        new Task<>(
            Executors.callable(command, null), unit.toNanos(initialDelay), positive(period, unit)));
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(
      Runnable command, long initialDelay, long delay, TimeUnit unit) {
    return enqueue(
        new Task<>(
            Executors.callable(command, null), unit.toNanos(initialDelay), -positive(delay, unit)));
  }

  private static long positive(long period, TimeUnit unit) {
    if (period <= 0) {
      throw new IllegalArgumentException("the period must be positive, was " + period);
    }
    return unit.toNanos(period);
  }

  // ---- ExecutorService ----

  @Override
  public void execute(Runnable command) {
    synchronized (this) {
      if (shutdown) {
        throw new RejectedExecutionException("the manual scheduler is shut down");
      }
      running++;
    }
    try {
      command.run();
    } finally {
      synchronized (this) {
        running--;
      }
    }
  }

  @Override
  public synchronized void shutdown() {
    shutdown = true;
    List<Task<?>> periodic = new ArrayList<>();
    for (Task<?> task : queue) {
      if (task.periodic()) {
        periodic.add(task);
      }
    }
    periodic.forEach(task -> task.cancel(false));
  }

  @Override
  public synchronized List<Runnable> shutdownNow() {
    shutdown = true;
    List<Runnable> dropped = new ArrayList<>(queue);
    queue.clear();
    return dropped;
  }

  @Override
  public synchronized boolean isShutdown() {
    return shutdown;
  }

  @Override
  public synchronized boolean isTerminated() {
    return shutdown && queue.isEmpty() && running == 0;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) {
    return isTerminated();
  }

  /** One recorded task; its future is the task itself, as in the JDK's scheduler. */
  private final class Task<V> extends FutureTask<V> implements ScheduledFuture<V> {
    private final long order;

    /** Zero: one-shot; above zero: fixed rate; below zero: fixed delay. */
    private final long period;

    private long due;

    Task(Callable<V> callable, long delayNanos, long period) {
      super(callable);
      this.period = period;
      synchronized (ManualScheduler.this) {
        this.order = sequence++;
        this.due = ticker.nanoTime() + Math.max(0, delayNanos);
      }
    }

    boolean periodic() {
      return period != 0;
    }

    void runOnce() {
      if (!periodic()) {
        run();
        return;
      }
      if (!runAndReset()) {
        return; // cancelled, or it threw: it is over
      }
      synchronized (ManualScheduler.this) {
        if (shutdown || isCancelled()) {
          return;
        }
        due = period > 0 ? due + period : ticker.nanoTime() - period;
        queue.add(this);
      }
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      if (cancelled) {
        synchronized (ManualScheduler.this) {
          queue.remove(this);
        }
      }
      return cancelled;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      synchronized (ManualScheduler.this) {
        return unit.convert(due - ticker.nanoTime(), TimeUnit.NANOSECONDS);
      }
    }

    @Override
    public int compareTo(Delayed other) {
      if (other == this) {
        return 0;
      }
      if (other instanceof Task<?> task) {
        int byDue = Long.compare(due - task.due, 0);
        return byDue != 0 ? byDue : Long.compare(order, task.order);
      }
      return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
    }
  }
}
