package io.latchkey.testkit.faults;

import io.latchkey.BackendUnavailableException;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LeasedSemaphore;
import io.latchkey.testkit.process.WorkerChannel;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * The main class of one fault-suite worker JVM: one latchkey client whose threads each take one
 * lock (or permit) in a loop and, holding it, write to the {@link FencedStore} and increment its
 * counter, until told to stop.
 *
 * <p>Arguments, {@code key=value}: {@code uri}, {@code mode} (a {@link FaultMode}), {@code name},
 * {@code worker} (its number), {@code threads} (how many threads of the client loop on the lock, 1
 * if missing), {@code storePort}, {@code leaseMs}, {@code renewMs}, {@code operationTimeoutMs},
 * {@code holdMs} (the mean time between reading and writing the counter), {@code longHoldMs} (the
 * time of a long critical section, which {@code LONG} asks for), {@code waitMs} (the longest
 * acquire).
 *
 * <p>It prints one event per line, each with {@link System#nanoTime()} (CLOCK_MONOTONIC on Linux,
 * the same clock in every JVM of the host). {@code READY t}, {@code UNREACHABLE t <exception>}
 * (connecting failed; it tries again) and {@code STOPPED t} concern the whole worker; every other
 * event starts with {@code #k}, the number of the thread (0 to threads - 1) it concerns: {@code #k
 * WAIT t}; {@code #k ENTER t token plannedHoldMs}; {@code #k WRITE t token OK|REFUSED}; {@code #k
 * LOST t token} (from {@link Lease#onLost}); {@code #k EXIT t token valid} (the critical section is
 * over; {@code valid} is {@link Lease#isValid()} then); {@code #k RELEASED t token
 * OK|LOST|ERROR:<exception>}; {@code #k FAILED t <exception>} (an acquire that did not succeed). It
 * reads {@code LONG} (make the next critical section of any of its threads a long one, so that a
 * fault can strike inside it) and {@code STOP} on standard input, and exits when the input ends.
 */
public final class FaultWorker {
  private static final long FAILURE_BACKOFF_MS = 50;

  private final WorkerChannel args;
  private final AtomicBoolean longNext = new AtomicBoolean();
  private volatile boolean stopping;

  private FaultWorker(WorkerChannel args) {
    this.args = args;
  }

  /**
   * @param argv {@code key=value} arguments, see the class documentation
   */
  public static void main(String[] argv) {
    try {
      new FaultWorker(WorkerChannel.parse(argv)).run();
      System.exit(0);
    } catch (Throwable e) {
      WorkerChannel.fail(e);
    }
  }

  private void run() throws Exception {
    WorkerChannel.watchStandardInput(
        command -> {
          if (command.equals("STOP")) {
            stopping = true;
          } else if (command.equals("LONG")) {
            longNext.set(true);
          }
        });
    Duration lease = Duration.ofMillis(number("leaseMs"));
    LatchkeyOptions options =
        LatchkeyOptions.builder()
            .leaseTime(lease)
            .renewInterval(Duration.ofMillis(number("renewMs")))
            .operationTimeout(Duration.ofMillis(number("operationTimeoutMs")))
            .queueKeepAlive(lease)
            .closeOnShutdown(false)
            .build();
    try (Latchkey latchkey = connect(args.required("uri"), options)) {
      say("READY " + System.nanoTime());
      List<Thread> threads = new ArrayList<>();
      for (int thread = 0; thread < args.number("threads", 1); thread++) {
        int number = thread;
        Thread looping =
            new Thread(
                () -> {
                  try {
                    loop(latchkey, number);
                  } catch (Throwable e) {
                    WorkerChannel.fail(e);
                  }
                },
                "fault-worker-" + number);
        looping.start();
        threads.add(looping);
      }
      for (Thread thread : threads) {
        thread.join();
      }
    }
    say("STOPPED " + System.nanoTime());
  }

  /**
   * One thread's loop on the lock, with a connection of its own to the store, until told to stop.
   * Its events start with {@code #thread}.
   */
  private void loop(Latchkey latchkey, int thread) throws IOException, InterruptedException {
    FaultMode mode = FaultMode.valueOf(args.required("mode"));
    String name = args.required("name");
    int worker = (int) number("worker");
    Duration lease = Duration.ofMillis(number("leaseMs"));
    Duration wait = Duration.ofMillis(number("waitMs"));
    long holdMs = number("holdMs");
    long longHoldMs = number("longHoldMs");
    String self = "#" + thread + " ";
    SplittableRandom random = new SplittableRandom(worker * 31L + thread + System.nanoTime());
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), (int) number("storePort"));
        BufferedReader store =
            new BufferedReader(
                new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        Writer request = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8)) {
      socket.setTcpNoDelay(true);
      while (!stopping) {
        say(self + "WAIT " + System.nanoTime());
        Lease held;
        try {
          held = acquire(latchkey, mode, name, wait, lease);
        } catch (RuntimeException e) {
          say(self + "FAILED " + System.nanoTime() + " " + e.getClass().getSimpleName());
          LockSupport.parkNanos(Duration.ofMillis(FAILURE_BACKOFF_MS).toNanos());
          continue;
        }
        long token = held.fencingToken();
        long plannedHoldMs =
            longNext.getAndSet(false) ? longHoldMs : holdMs / 2 + random.nextLong(holdMs + 1);
        say(self + "ENTER " + System.nanoTime() + " " + token + " " + plannedHoldMs);
        held.onLost(lost -> say(self + "LOST " + System.nanoTime() + " " + token));
        // Read, work, then write: a holder paused while it works comes back with an old token,
        // which the fenced register must refuse, and an increment that another holder overwrites.
        long seen = Long.parseLong(call(store, request, "GET").split(" ", -1)[1]);
        LockSupport.parkNanos(Duration.ofMillis(plannedHoldMs).toNanos());
        String written = call(store, request, "WRITE " + token + " " + worker);
        say(self + "WRITE " + System.nanoTime() + " " + token + " " + written.split(" ", -1)[0]);
        call(store, request, "SET " + (seen + 1) + " " + worker);
        say(self + "EXIT " + System.nanoTime() + " " + token + " " + held.isValid());
        say(self + "RELEASED " + System.nanoTime() + " " + token + " " + release(held));
      }
    }
  }

  /**
   * Connects, trying again while the server is unreachable (a replacement worker may start while
   * the server is down or its network frozen): each failure prints {@code UNREACHABLE t
   * <exception>}.
   */
  private Latchkey connect(String uri, LatchkeyOptions options) {
    while (true) {
      try {
        return Latchkey.connect(uri, options);
      } catch (BackendUnavailableException e) {
        if (stopping) {
          throw e;
        }
        say("UNREACHABLE " + System.nanoTime() + " " + e.getClass().getSimpleName());
        LockSupport.parkNanos(Duration.ofMillis(FAILURE_BACKOFF_MS).toNanos());
      }
    }
  }

  private static Lease acquire(
      Latchkey latchkey, FaultMode mode, String name, Duration wait, Duration lease)
      throws InterruptedException {
    return switch (mode) {
      case WATCHDOG_LOCK -> latchkey.lock(name).acquire(wait);
      case EXPLICIT_LEASE_LOCK -> latchkey.lock(name).acquire(wait, lease);
      case FAIR_LOCK -> latchkey.fairLock(name).acquire(wait);
      case LEASED_SEMAPHORE -> onePermit(latchkey, name).acquire(wait);
      case EXPLICIT_LEASE_SEMAPHORE -> onePermit(latchkey, name).acquire(wait, lease);
    };
  }

  private static LeasedSemaphore onePermit(Latchkey latchkey, String name) {
    LeasedSemaphore semaphore = latchkey.leasedSemaphore(name);
    // Every time: a server that lost its data forgets the number of permits too.
    semaphore.trySetPermits(1);
    return semaphore;
  }

  private static String release(Lease held) {
    try {
      held.release();
      return "OK";
    } catch (LeaseLostException e) {
      return "LOST";
    } catch (RuntimeException e) {
      return "ERROR:" + e.getClass().getSimpleName();
    }
  }

  private static String call(BufferedReader store, Writer request, String line) throws IOException {
    request.write(line + "\n");
    request.flush();
    String reply = store.readLine();
    if (reply == null) {
      throw new IOException("the fenced store closed the connection");
    }
    return reply;
  }

  private long number(String key) {
    return Long.parseLong(args.required(key));
  }

  private static void say(String line) {
    WorkerChannel.say(line);
  }
}
