package io.latchkey.internal;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in the order they were given, on another executor (the user's callback
 * executor): callbacks that must not overlap or overtake each other, such as one participant's
 * elected and ended calls. A task that throws is logged and the next one runs.
 */
final class SerialExecutor implements Executor {
  private static final Logger LOG = LoggerFactory.getLogger(SerialExecutor.class);

  private final Executor target;
  private final Queue<Runnable> queue = new ArrayDeque<>();
  private boolean draining;

  SerialExecutor(Executor target) {
    this.target = target;
  }

  @Override
  public void execute(Runnable task) {
    synchronized (queue) {
      queue.add(task);
      if (draining) {
        return;
      }
      draining = true;
    }
    try {
      target.execute(this::drain);
    } catch (RejectedExecutionException refused) {
      synchronized (queue) {
        queue.clear();
        draining = false;
      }
      LOG.warn("the callback executor refused a callback");
    }
  }

  private void drain() {
    while (true) {
      @Nullable Runnable next;
      synchronized (queue) {
        next = queue.poll();
        if (next == null) {
          draining = false;
          return;
        }
      }
      try {
        next.run();
      } catch (RuntimeException e) {
        LOG.error("a callback failed", e);
      }
    }
  }
}
