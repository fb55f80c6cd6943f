package io.latchkey.testkit.faults;

import io.latchkey.servers.FreezableTcpProxy;
import io.latchkey.testkit.faults.History.Fault;
import io.latchkey.testkit.process.WorkerJvm;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One fault run: worker JVMs contend for one lock of a backend while a seeded schedule injects
 * faults, then the history is analysed into a {@link FaultReport}.
 *
 * <pre>{@code
 * FaultReport report =
 *     FaultRun.builder(FaultMode.WATCHDOG_LOCK)
 *         .faults(EnumSet.allOf(FaultKind.class))
 *         .duration(Duration.ofMinutes(2))
 *         .build()
 *         .run(serverControl);
 * System.out.println(report.describe());
 * }</pre>
 *
 * <p>How a run goes: a {@link FencedStore} starts in this JVM; each worker slot gets a {@link
 * FreezableTcpProxy} to the server, so one worker's network can fail alone; {@link FaultWorker}
 * JVMs start, one per slot, each connecting through its proxy, and each running one or more threads
 * of its client on the lock. Then, until the duration is over, the injector waits a quiet while
 * (half a lease to one and a half), picks a fault kind and its parameters from the seeded random
 * generator, and applies it. A fault aimed at a worker picks one at random and, to strike inside
 * the critical section, first asks it for a long one (twice the lease under the watchdog, half the
 * lease with an explicit lease) and waits until it has entered it; a killed worker is replaced by a
 * new one (with a new number) in the same slot, and the injector waits until it is connected. With
 * several threads per worker, a fault aimed at a worker strikes all its threads: "in the critical
 * section" means one of them holds the lock, and a paused waiter's JVM may hold it too (its other
 * threads wait behind it). At the end every fault is undone, the workers are told to stop and, once
 * they have, the history is analysed. The seed is printed first, so a run's choices can be replayed
 * (the timing of the workers cannot).
 */
public final class FaultRun {
  private final FaultMode mode;
  private final Set<FaultKind> faults;
  private final Duration duration;
  private final int workers;
  private final int threads;
  private final long seed;
  private final Duration lease;
  private final Duration renewInterval;
  private final Duration operationTimeout;
  private final Duration hold;
  private final Duration longHold;
  private final Duration wait;

  private FaultRun(Builder builder) {
    this.mode = builder.mode;
    this.faults = EnumSet.copyOf(builder.faults);
    this.duration = builder.duration;
    this.workers = builder.workers;
    this.threads = builder.threads;
    this.seed = builder.seed;
    this.lease = builder.lease;
    this.renewInterval =
        builder.renewInterval != null ? builder.renewInterval : builder.lease.dividedBy(3);
    this.operationTimeout =
        builder.operationTimeout != null ? builder.operationTimeout : builder.lease.dividedBy(2);
    this.hold = builder.hold;
    // Long enough to be struck by a fault; with an explicit lease, still within the lease.
    this.longHold = mode.explicitLease() ? lease.dividedBy(2) : lease.multipliedBy(2);
    this.wait = builder.wait;
  }

  /**
   * @param mode what the workers take
   * @return a builder with the defaults: every worker-side fault, 2 minutes, 3 workers of one
   *     thread each, a random seed, 2 s lease renewed every third, 20 ms in the critical section
   */
  public static Builder builder(FaultMode mode) {
    return new Builder(mode);
  }

  /**
   * @return the seed of the fault schedule
   */
  public long seed() {
    return seed;
  }

  /**
   * Runs the workers and the faults for the configured duration, undoes every fault, stops the
   * workers and analyses what happened.
   *
   * @param server the backend's server; it must be running, and is running again afterwards
   * @return the figures
   * @throws IOException if a worker JVM or the store cannot be started
   * @throws InterruptedException if interrupted; the workers are killed
   * @throws IllegalArgumentException if a server fault is asked of a backend that cannot inject it
   */
  public FaultReport run(ServerControl server) throws IOException, InterruptedException {
    for (FaultKind kind : faults) {
      if (kind.serverFault() && !server.serverFaults().contains(kind)) {
        throw new IllegalArgumentException("this backend cannot inject " + kind);
      }
    }
    System.out.printf(
        "fault run %s: seed %d, faults %s, %d workers x %d threads, %s, lease %d ms%n",
        mode, seed, faults, workers, threads, duration, lease.toMillis());
    History history = new History();
    String name = "latchkey-faults/" + mode.name().toLowerCase(Locale.ROOT) + "/" + seed;
    try (FencedStore store = FencedStore.start();
        Slots slots = new Slots(server, store, history, name)) {
      slots.startAll();
      long start = System.nanoTime();
      new Injector(server, slots, history).run(start + duration.toNanos());
      long injected = System.nanoTime() - start;
      slots.undoAll();
      slots.stopAll();
      history.runEnded(System.nanoTime());
      FaultReport report =
          new FaultAnalysis(
                  mode,
                  lease.toNanos(),
                  renewInterval.toNanos(),
                  server.explicitPermitReapDelay().toNanos())
              .analyse(
                  history,
                  store.writes(),
                  store.sets(),
                  store.counter(),
                  seed,
                  TimeUnit.NANOSECONDS.toMillis(injected));
      System.out.print(report.describe());
      return report;
    }
  }

  /** The worker slots: one proxy each and the worker JVM now in it. */
  private final class Slots implements AutoCloseable {
    private final ServerControl server;
    private final FencedStore store;
    private final History history;
    private final String name;
    private final List<FreezableTcpProxy> proxies = new ArrayList<>();
    private final List<WorkerJvm> running = new ArrayList<>();
    private final List<Integer> ids = new ArrayList<>();
    private final List<WorkerJvm> all = new ArrayList<>();
    private int nextId;

    Slots(ServerControl server, FencedStore store, History history, String name) {
      this.server = server;
      this.store = store;
      this.history = history;
      this.name = name;
    }

    synchronized void startAll() throws IOException, InterruptedException {
      for (int slot = 0; slot < workers; slot++) {
        proxies.add(FreezableTcpProxy.start(server.host(), server.port()));
        running.add(launch(slot));
        ids.add(nextId - 1);
      }
      for (WorkerJvm worker : running) {
        worker.awaitLine("READY", Duration.ofMinutes(2));
      }
    }

    private WorkerJvm launch(int slot) throws IOException {
      int id = nextId++;
      FreezableTcpProxy proxy = proxies.get(slot);
      List<String> args =
          List.of(
              "uri=" + server.uriVia(proxy.host(), proxy.port()),
              "mode=" + mode,
              "name=" + name,
              "worker=" + id,
              "threads=" + threads,
              "storePort=" + store.port(),
              "leaseMs=" + lease.toMillis(),
              "renewMs=" + renewInterval.toMillis(),
              "operationTimeoutMs=" + operationTimeout.toMillis(),
              "holdMs=" + hold.toMillis(),
              "longHoldMs=" + longHold.toMillis(),
              "waitMs=" + wait.toMillis());
      WorkerJvm worker = WorkerJvm.start(FaultWorker.class, args, line -> history.record(id, line));
      all.add(worker);
      return worker;
    }

    synchronized int idIn(int slot) {
      return ids.get(slot);
    }

    synchronized WorkerJvm workerIn(int slot) {
      return running.get(slot);
    }

    FreezableTcpProxy proxyOf(int slot) {
      return proxies.get(slot);
    }

    /**
     * Kills the worker in a slot, records its death, and starts a replacement, waiting until it is
     * connected so that the next fault finds every slot alive.
     */
    synchronized void replace(int slot) throws IOException, InterruptedException {
      running.get(slot).kill();
      history.killed(ids.get(slot), System.nanoTime());
      ids.set(slot, nextId);
      WorkerJvm replacement = launch(slot);
      running.set(slot, replacement);
      replacement.awaitLine("READY", Duration.ofMinutes(2));
    }

    synchronized void undoAll() throws InterruptedException {
      proxies.forEach(FreezableTcpProxy::unfreeze);
      for (WorkerJvm worker : running) {
        WorkerJvm.signal("CONT", worker.pid());
      }
    }

    synchronized void stopAll() throws InterruptedException {
      for (WorkerJvm worker : running) {
        if (worker.isAlive()) {
          worker.send("STOP");
        }
      }
      Duration grace = wait.plus(operationTimeout.multipliedBy(4)).plus(Duration.ofSeconds(10));
      for (int slot = 0; slot < running.size(); slot++) {
        WorkerJvm worker = running.get(slot);
        try {
          worker.awaitExit(grace);
        } catch (AssertionError stuck) {
          System.out.println("worker " + ids.get(slot) + " did not stop; killing it");
          worker.kill();
          history.killed(ids.get(slot), System.nanoTime());
        }
      }
    }

    @Override
    public synchronized void close() {
      all.forEach(WorkerJvm::close);
      proxies.forEach(FreezableTcpProxy::close);
    }
  }

  /** Picks and applies faults until the deadline. */
  private final class Injector {
    private final ServerControl server;
    private final Slots slots;
    private final History history;
    private final SplittableRandom random = new SplittableRandom(seed);
    private final List<FaultKind> kinds;

    Injector(ServerControl server, Slots slots, History history) {
      this.server = server;
      this.slots = slots;
      this.history = history;
      this.kinds = List.copyOf(faults);
    }

    void run(long deadline) throws IOException, InterruptedException {
      while (true) {
        sleep(between(lease.dividedBy(2), lease.multipliedBy(3).dividedBy(2)));
        if (System.nanoTime() - deadline >= 0 || kinds.isEmpty()) {
          if (kinds.isEmpty()) {
            sleep(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
          }
          return;
        }
        inject(kinds.get(random.nextInt(kinds.size())));
      }
    }

    private void inject(FaultKind kind) throws IOException, InterruptedException {
      switch (kind) {
        case PAUSE_HOLDER -> {
          // At least two leases: the others have time to take the lock and write before it wakes.
          Duration pause = between(lease.multipliedBy(2), lease.multipliedBy(3));
          stop(target(true), pause, kind);
        }
        case PAUSE_WAITER -> {
          Duration pause = between(lease.multipliedBy(3).dividedBy(2), lease.multipliedBy(3));
          int slot = random.nextInt(workers);
          int worker = slots.idIn(slot);
          history.awaitWaiting(worker, wait.toNanos());
          stop(new Target(history, slot, worker, history.inSection(worker)), pause, kind);
        }
        case KILL_WORKER -> {
          Target target = target(random.nextBoolean());
          long start = System.nanoTime();
          slots.replace(target.slot());
          target.record(kind, start);
        }
        case FREEZE_CONNECTION -> {
          Duration frozen = between(lease.dividedBy(2), lease.multipliedBy(2));
          boolean cutAfter = random.nextBoolean();
          boolean repliesOnly = random.nextBoolean();
          Target target = target(random.nextBoolean());
          FreezableTcpProxy proxy = slots.proxyOf(target.slot());
          long start = System.nanoTime();
          if (repliesOnly) {
            proxy.freezeReplies();
          } else {
            proxy.freeze();
          }
          sleep(frozen);
          if (cutAfter) {
            proxy.cut();
          }
          proxy.unfreeze();
          target.record(kind, start);
        }
        case CUT_CONNECTION -> {
          Target target = target(random.nextBoolean());
          long start = System.nanoTime();
          slots.proxyOf(target.slot()).cut();
          target.record(kind, start);
        }
        case CRASH_SERVER -> {
          Duration down = between(Duration.ofMillis(100), lease);
          long start = System.nanoTime();
          server.crash();
          sleep(down);
          server.restart();
          history.fault(new Fault(kind, -1, false, start, System.nanoTime()));
        }
        case PAUSE_SERVER -> {
          Duration pause = between(lease.dividedBy(4), lease.multipliedBy(3).dividedBy(2));
          long start = System.nanoTime();
          server.pause(pause);
          sleep(pause);
          history.fault(new Fault(kind, -1, false, start, System.nanoTime()));
        }
      }
    }

    /** SIGSTOPs the target's JVM for the pause, then SIGCONTs it. */
    private void stop(Target target, Duration pause, FaultKind kind) throws InterruptedException {
      long pid = slots.workerIn(target.slot()).pid();
      long start = System.nanoTime();
      WorkerJvm.signal("STOP", pid);
      sleep(pause);
      WorkerJvm.signal("CONT", pid);
      target.record(kind, start);
    }

    /** A worker a fault is aimed at, and whether it was in the critical section then. */
    private record Target(History history, int slot, int worker, boolean inSection) {
      void record(FaultKind kind, long start) {
        history.fault(new Fault(kind, worker, inSection, start, System.nanoTime()));
      }
    }

    /**
     * Picks a worker slot at random and, if asked to, asks its worker for a long critical section
     * and waits (up to the acquire wait) until it has entered it, so that the fault strikes inside
     * the critical section; the worker is the target either way.
     */
    private Target target(boolean intoLongSection) throws InterruptedException {
      int slot = random.nextInt(workers);
      int worker = slots.idIn(slot);
      if (intoLongSection && slots.workerIn(slot).isAlive()) {
        slots.workerIn(slot).send("LONG");
        history.awaitEnter(worker, longHold.toMillis(), wait.toNanos());
      }
      return new Target(history, slot, worker, history.inSection(worker));
    }

    private Duration between(Duration low, Duration high) {
      return Duration.ofMillis(random.nextLong(low.toMillis(), high.toMillis() + 1));
    }
  }

  /** The fault schedule's own pauses: the one place this suite sleeps. */
  private static void sleep(Duration duration) throws InterruptedException {
    TimeUnit.NANOSECONDS.sleep(duration.toNanos());
  }

  /** Options of a {@link FaultRun}; every setter checks its argument. */
  public static final class Builder {
    private final FaultMode mode;
    private Set<FaultKind> faults =
        EnumSet.of(
            FaultKind.PAUSE_HOLDER,
            FaultKind.KILL_WORKER,
            FaultKind.FREEZE_CONNECTION,
            FaultKind.CUT_CONNECTION);
    private Duration duration = Duration.ofMinutes(2);
    private int workers = 3;
    private int threads = 1;
    private long seed = ThreadLocalRandom.current().nextLong();
    private Duration lease = Duration.ofSeconds(2);
    private @Nullable Duration renewInterval;
    private @Nullable Duration operationTimeout;
    private Duration hold = Duration.ofMillis(20);
    private Duration wait = Duration.ofSeconds(20);

    private Builder(FaultMode mode) {
      this.mode = Objects.requireNonNull(mode, "mode");
    }

    /**
     * @param faults the kinds to inject; none runs the workers without faults
     * @return this
     */
    public Builder faults(Set<FaultKind> faults) {
      this.faults = EnumSet.noneOf(FaultKind.class);
      this.faults.addAll(faults);
      return this;
    }

    /**
     * @param duration how long to inject faults, at least a second
     * @return this
     */
    public Builder duration(Duration duration) {
      this.duration = atLeast("duration", duration, Duration.ofSeconds(1));
      return this;
    }

    /**
     * @param workers how many worker JVMs contend, 2 to 16
     * @return this
     */
    public Builder workers(int workers) {
      if (workers < 2 || workers > 16) {
        throw new IllegalArgumentException("workers must be between 2 and 16, was " + workers);
      }
      this.workers = workers;
      return this;
    }

    /**
     * @param threads how many threads of each worker's client loop on the lock, 1 to 16: with more
     *     than one, a release finds waiters of its own client, which a backend that hands over
     *     grants in the release's call
     * @return this
     */
    public Builder threadsPerWorker(int threads) {
      if (threads < 1 || threads > 16) {
        throw new IllegalArgumentException("threads must be between 1 and 16, was " + threads);
      }
      this.threads = threads;
      return this;
    }

    /**
     * @param seed the seed of the fault schedule, e.g. one printed by an earlier run
     * @return this
     */
    public Builder seed(long seed) {
      this.seed = seed;
      return this;
    }

    /**
     * @param lease the lease of every grant (watchdog or explicit), at least 100 ms
     * @return this
     */
    public Builder lease(Duration lease) {
      this.lease = atLeast("lease", lease, Duration.ofMillis(100));
      return this;
    }

    /**
     * @param renewInterval the watchdog's period, by default a third of the lease
     * @return this
     */
    public Builder renewInterval(Duration renewInterval) {
      this.renewInterval = atLeast("renewInterval", renewInterval, Duration.ofMillis(10));
      return this;
    }

    /**
     * @param operationTimeout the workers' bound on one backend call, by default half the lease
     * @return this
     */
    public Builder operationTimeout(Duration operationTimeout) {
      this.operationTimeout = atLeast("operationTimeout", operationTimeout, Duration.ofMillis(10));
      return this;
    }

    /**
     * @param hold the mean time a worker spends between reading and writing in the critical section
     * @return this
     */
    public Builder hold(Duration hold) {
      this.hold = atLeast("hold", hold, Duration.ZERO);
      return this;
    }

    /**
     * @param wait the longest acquire call of a worker
     * @return this
     */
    public Builder acquireWait(Duration wait) {
      this.wait = atLeast("wait", wait, Duration.ofMillis(100));
      return this;
    }

    /**
     * @return the run, not started
     */
    public FaultRun build() {
      return new FaultRun(this);
    }

    private static Duration atLeast(String what, Duration value, Duration min) {
      if (value.compareTo(min) < 0) {
        throw new IllegalArgumentException(what + " must be at least " + min + ", was " + value);
      }
      return value;
    }
  }
}
