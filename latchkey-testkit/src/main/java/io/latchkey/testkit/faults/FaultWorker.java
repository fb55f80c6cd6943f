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
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * The main class of one fault-suite worker JVM: a latchkey client that takes one lock (or permit)
 * in a loop and, holding it, writes to the {@link FencedStore} and increments its counter, until
 * told to stop.
 *
 * <p>Arguments, {@code key=value}: {@code uri}, {@code mode} (a {@link FaultMode}), {@code name},
 * {@code worker} (its number), {@code storePort}, {@code leaseMs}, {@code renewMs}, {@code
 * operationTimeoutMs}, {@code holdMs} (the mean time between reading and writing the counter),
 * {@code longHoldMs} (the time of a long critical section, which {@code LONG} asks for), {@code
 * waitMs} (the longest acquire).
 *
 * <p>It prints one event per line, each with {@link System#nanoTime()} (CLOCK_MONOTONIC on Linux,
 * the same clock in every JVM of the host): {@code READY t}; {@code WAIT t}; {@code ENTER t token
 * plannedHoldMs}; {@code WRITE t token OK|REFUSED}; {@code LOST t token} (from {@link
 * Lease#onLost}); {@code EXIT t token valid} (the critical section is over; {@code valid} is {@link
 * Lease#isValid()} then); {@code RELEASED t token OK|LOST|ERROR:<exception>}; {@code FAILED t
 * <exception>} (an acquire that did not succeed); {@code UNREACHABLE t <exception>} (connecting
 * failed; it tries again); {@code STOPPED t}. It reads {@code LONG} (make the next critical section
 * a long one, so that a fault can strike inside it) and {@code STOP} on standard input, and exits
 * when the input ends.
 */
public final class FaultWorker {
  private static final long FAILURE_BACKOFF_MS = 50;

  private final WorkerChannel args;
  private volatile boolean stopping;
  private volatile boolean longNext;

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
            longNext = true;
          }
        });
    FaultMode mode = FaultMode.valueOf(args.required("mode"));
    String name = args.required("name");
    int worker = (int) number("worker");
    Duration lease = Duration.ofMillis(number("leaseMs"));
    Duration wait = Duration.ofMillis(number("waitMs"));
    long holdMs = number("holdMs");
    long longHoldMs = number("longHoldMs");
    LatchkeyOptions options =
        LatchkeyOptions.builder()
            .leaseTime(lease)
            .renewInterval(Duration.ofMillis(number("renewMs")))
            .operationTimeout(Duration.ofMillis(number("operationTimeoutMs")))
            .queueKeepAlive(lease)
            .closeOnShutdown(false)
            .build();
    SplittableRandom random = new SplittableRandom(worker * 31L + System.nanoTime());
    try (Latchkey latchkey = connect(args.required("uri"), options);
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), (int) number("storePort"));
        BufferedReader store =
            new BufferedReader(
                new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        Writer request = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8)) {
      socket.setTcpNoDelay(true);
      say("READY " + System.nanoTime());
      while (!stopping) {
        say("WAIT " + System.nanoTime());
        Lease held;
        try {
          held = acquire(latchkey, mode, name, wait, lease);
        } catch (RuntimeException e) {
          say("FAILED " + System.nanoTime() + " " + e.getClass().getSimpleName());
          LockSupport.parkNanos(Duration.ofMillis(FAILURE_BACKOFF_MS).toNanos());
          continue;
        }
        long token = held.fencingToken();
        long plannedHoldMs = longNext ? longHoldMs : holdMs / 2 + random.nextLong(holdMs + 1);
        longNext = false;
        say("ENTER " + System.nanoTime() + " " + token + " " + plannedHoldMs);
        held.onLost(lost -> say("LOST " + System.nanoTime() + " " + token));
        // Read, work, then write: a holder paused while it works comes back with an old token,
        // which the fenced register must refuse, and an increment that another holder overwrites.
        long seen = Long.parseLong(call(store, request, "GET").split(" ", -1)[1]);
        LockSupport.parkNanos(Duration.ofMillis(plannedHoldMs).toNanos());
        String written = call(store, request, "WRITE " + token + " " + worker);
        say("WRITE " + System.nanoTime() + " " + token + " " + written.split(" ", -1)[0]);
        call(store, request, "SET " + (seen + 1) + " " + worker);
        say("EXIT " + System.nanoTime() + " " + token + " " + held.isValid());
        say("RELEASED " + System.nanoTime() + " " + token + " " + release(held));
      }
    }
    say("STOPPED " + System.nanoTime());
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
      case LEASED_SEMAPHORE -> {
        LeasedSemaphore semaphore = latchkey.leasedSemaphore(name);
        // Every time: a server that lost its data forgets the number of permits too.
        semaphore.trySetPermits(1);
        yield semaphore.acquire(wait);
      }
    };
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
