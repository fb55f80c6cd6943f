package io.latchkey.testkit.process;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.LeaderElection;
import io.latchkey.LeaderTerm;
import io.latchkey.LeadershipListener;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * The main class of a worker JVM started by {@link WorkerJvm}: one latchkey client in its own
 * process, driven by {@code key=value} arguments and a line protocol.
 *
 * <p>Arguments: {@code uri=} (required), {@code mode=increment|hold}, {@code lock=} the lock name,
 * {@code watchdogLeaseMs=} and {@code renewMs=} for the client's watchdog (default 2000 and a
 * third), {@code waitMs=} the longest wait for the lock (default 60000); for {@code increment} also
 * {@code counter=} a file holding a number, {@code threads=} and {@code iterations=}; for {@code
 * hold} optionally {@code leaseMs=} an explicit lease (else the watchdog keeps it) and {@code
 * fair=true} to take the lock as a {@linkplain Latchkey#fairLock fair lock}; for {@code elect} the
 * election's name in {@code lock=}.
 *
 * <p>Protocol on standard output, one line each:
 *
 * <ul>
 *   <li>{@code READY <clientId>} once connected;
 *   <li>{@code increment}: waits for {@code GO} on standard input, then every thread adds one to
 *       the counter file {@code iterations} times, each time reading the file, yielding and writing
 *       it back while holding the lock; prints {@code DONE <increments>} and exits 0;
 *   <li>{@code hold}: acquires the lock, prints {@code ACQUIRED <fencingToken> <clientId> <owner>}
 *       and holds it until killed;
 *   <li>{@code elect}: joins the leader election, prints {@code JOINED <participantId>}, then
 *       {@code ELECTED <fencingToken>} when elected and {@code ENDED <fencingToken> left|lost} when
 *       a term ends; on {@code LEAVE} leaves the election, prints {@code LEFT} and exits 0;
 *   <li>{@code ERROR <message>} and exit 1 on any failure, including a lease lost while
 *       incrementing.
 * </ul>
 *
 * When standard input reaches its end (the test JVM is gone) the worker exits, so that a crashed
 * test leaves no process behind.
 */
public final class LockWorker {
  private final WorkerChannel args;
  private final CountDownLatch go = new CountDownLatch(1);
  private final CountDownLatch leave = new CountDownLatch(1);

  private LockWorker(WorkerChannel args) {
    this.args = args;
  }

  /**
   * @param argv {@code key=value} arguments, see the class documentation
   */
  public static void main(String[] argv) {
    try {
      new LockWorker(WorkerChannel.parse(argv)).run();
    } catch (Throwable e) {
      WorkerChannel.fail(e);
    }
  }

  private void run() throws Exception {
    WorkerChannel.watchStandardInput(
        command -> {
          if (command.equals("GO")) {
            go.countDown();
          } else if (command.equals("LEAVE")) {
            leave.countDown();
          }
        });
    long watchdogLease = args.number("watchdogLeaseMs", 2000);
    LatchkeyOptions.Builder options =
        LatchkeyOptions.builder()
            .leaseTime(Duration.ofMillis(watchdogLease))
            .renewInterval(
                Duration.ofMillis(args.number("renewMs", Math.max(10, watchdogLease / 3))))
            .closeOnShutdown(true);
    String mode = args.required("mode");
    try (Latchkey latchkey = Latchkey.connect(args.required("uri"), options.build())) {
      WorkerChannel.say("READY " + latchkey.clientId());
      switch (mode) {
        case "increment" -> increment(latchkey);
        case "hold" -> hold(latchkey);
        case "elect" -> elect(latchkey);
        default -> throw new IllegalArgumentException("unknown mode: " + mode);
      }
    }
    System.exit(0);
  }

  private void increment(Latchkey latchkey) throws Exception {
    Path counter = Path.of(args.required("counter"));
    String name = args.required("lock");
    int threads = (int) args.number("threads", 4);
    long iterations = args.number("iterations", 50);
    Duration wait = Duration.ofMillis(args.number("waitMs", 60_000));
    AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();
    List<Thread> running = new ArrayList<>();
    go.await();
    for (int t = 0; t < threads; t++) {
      Thread thread =
          new Thread(
              () -> {
                try {
                  DistributedLock lock = latchkey.lock(name);
                  for (long i = 0; i < iterations && failure.get() == null; i++) {
                    Lease lease = lock.acquire(wait);
                    try {
                      long seen = read(counter);
                      Thread.yield();
                      Files.writeString(counter, Long.toString(seen + 1));
                      if (!lease.isValid()) {
                        throw new IllegalStateException("lease lost while incrementing: " + lease);
                      }
                    } finally {
                      lease.release();
                    }
                  }
                } catch (Throwable e) {
                  failure.compareAndSet(null, e);
                }
              },
              "increment-" + t);
      running.add(thread);
      thread.start();
    }
    for (Thread thread : running) {
      thread.join();
    }
    Throwable failed = failure.get();
    if (failed != null) {
      WorkerChannel.fail(failed);
    }
    WorkerChannel.say("DONE " + threads * iterations);
  }

  /**
   * Reads the counter; a file that does not hold a number was caught half-written by another holder
   * of the lock.
   */
  private static long read(Path counter) throws IOException {
    String text = Files.readString(counter).trim();
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      throw new IllegalStateException(
          "the counter file holds '"
              + text
              + "' while this worker holds the lock: another process is writing it at the same"
              + " time, mutual exclusion is broken",
          e);
    }
  }

  private void hold(Latchkey latchkey) throws InterruptedException {
    String name = args.required("lock");
    DistributedLock lock =
        Boolean.parseBoolean(args.optional("fair")) ? latchkey.fairLock(name) : latchkey.lock(name);
    Duration wait = Duration.ofMillis(args.number("waitMs", 60_000));
    String lease = args.optional("leaseMs");
    Lease held =
        lease == null
            ? lock.acquire(wait)
            : lock.acquire(wait, Duration.ofMillis(Long.parseLong(lease)));
    WorkerChannel.say(
        "ACQUIRED " + held.fencingToken() + " " + latchkey.clientId() + " " + held.holderId());
    new CountDownLatch(1).await();
  }

  private void elect(Latchkey latchkey) throws InterruptedException {
    AtomicInteger elected = new AtomicInteger();
    Semaphore ended = new Semaphore(0);
    LeadershipListener report =
        new LeadershipListener() {
          @Override
          public void elected(LeaderTerm term) {
            elected.incrementAndGet();
            WorkerChannel.say("ELECTED " + term.fencingToken());
          }

          @Override
          public void ended(LeaderTerm term, @Nullable LeaseLostException lost) {
            WorkerChannel.say("ENDED " + term.fencingToken() + (lost == null ? " left" : " lost"));
            ended.release();
          }
        };
    try (LeaderElection election = latchkey.joinElection(args.required("lock"), report)) {
      WorkerChannel.say("JOINED " + election.participantId());
      leave.await();
    }
    // The last term's end is reported on the callback executor: let it be printed before LEFT.
    if (!ended.tryAcquire(elected.get(), 10, TimeUnit.SECONDS)) {
      throw new IllegalStateException("a term did not end after the election was left");
    }
    WorkerChannel.say("LEFT");
  }
}
