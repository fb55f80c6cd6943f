package io.latchkey.bench;

import io.latchkey.bench.LockClients.Library;
import io.latchkey.bench.LockClients.Style;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * Threads repeating acquire+release cycles on one lock name, for the command counts of {@link
 * ContentionCounts}: {@code clients} clients of one library, {@code threadsPerClient} threads on
 * each, every thread on the same lock.
 */
final class LockWorkload implements AutoCloseable {
  private static final Duration JOIN_TIMEOUT = Duration.ofSeconds(30);

  private final LockClients clients;
  private final List<Thread> threads = new ArrayList<>();
  private final LongAdder cycles = new LongAdder();
  private final AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();
  private volatile boolean running = true;

  /**
   * Opens the clients and starts the threads.
   *
   * @param uri the server
   * @param library which library
   * @param clientCount how many clients (processes, in effect)
   * @param threadsPerClient how many threads on each client
   * @param name the lock they all take
   */
  LockWorkload(String uri, Library library, int clientCount, int threadsPerClient, String name) {
    this.clients = LockClients.open(library, clientCount, uri, LockClients.DEFAULT_WATCHDOG_LEASE);
    for (int c = 0; c < clientCount; c++) {
      for (int t = 0; t < threadsPerClient; t++) {
        String owner = "client-" + c + "-thread-" + t;
        LockClients.Cycle cycle = clients.cycle(c, name, owner, Style.LOCK);
        Thread thread = new Thread(() -> loop(cycle), "workload-" + owner);
        thread.setDaemon(true);
        threads.add(thread);
      }
    }
    threads.forEach(Thread::start);
  }

  private void loop(LockClients.Cycle cycle) {
    try {
      while (running) {
        cycle.run();
        cycles.increment();
      }
    } catch (Throwable e) {
      failure.compareAndSet(null, e);
      running = false;
    }
  }

  /** Returns the cycles completed so far, by all threads. */
  long cycles() {
    return cycles.sum();
  }

  /**
   * Lets every thread finish the cycle it is in, and waits for them.
   *
   * @throws IllegalStateException if a cycle failed or a thread did not finish within 30 s
   */
  void stop() throws InterruptedException {
    running = false;
    long deadline = System.nanoTime() + JOIN_TIMEOUT.toNanos();
    for (Thread thread : threads) {
      thread.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
      if (thread.isAlive()) {
        throw new IllegalStateException(thread.getName() + " did not finish its cycle in 30 s");
      }
    }
    Throwable failed = failure.get();
    if (failed != null) {
      throw new IllegalStateException("a lock cycle failed: " + failed, failed);
    }
  }

  @Override
  public void close() {
    running = false;
    clients.close();
  }
}
