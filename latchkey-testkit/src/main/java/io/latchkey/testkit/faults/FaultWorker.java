package io.latchkey.testkit.faults;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LeasedSemaphore;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
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
 * {@code waitMs} (the longest acquire).
 *
 * <p>It prints one event per line, each with {@link System#nanoTime()} (CLOCK_MONOTONIC on Linux,
 * the same clock in every JVM of the host): {@code READY t}; {@code WAIT t}; {@code ENTER t token};
 * {@code WRITE t token OK|REFUSED}; {@code LOST t token} (from {@link Lease#onLost}); {@code EXIT t
 * token valid} (the critical section is over; {@code valid} is {@link Lease#isValid()} then);
 * {@code RELEASED t token OK|LOST|ERROR:<exception>}; {@code FAILED t <exception>} (an acquire that
 * did not succeed); {@code STOPPED t}. It reads {@code STOP} on standard input, and exits when the
 * input ends.
 */
public final class FaultWorker {
  private static final long FAILURE_BACKOFF_MS = 50;

  private final Map<String, String> args;
  private volatile boolean stopping;

  private FaultWorker(Map<String, String> args) {
    this.args = args;
  }

  /**
   * @param argv {@code key=value} arguments, see the class documentation
   */
  public static void main(String[] argv) {
    Map<String, String> args = new HashMap<>();
    for (String arg : argv) {
      int eq = arg.indexOf('=');
      args.put(arg.substring(0, Math.max(eq, 0)), arg.substring(eq + 1));
    }
    try {
      new FaultWorker(args).run();
      System.exit(0);
    } catch (Throwable e) {
      e.printStackTrace();
      say("ERROR " + String.valueOf(e).replace('\n', ' '));
      System.exit(1);
    }
  }

  private void run() throws Exception {
    watchStandardInput();
    FaultMode mode = FaultMode.valueOf(required("mode"));
    String name = required("name");
    int worker = (int) number("worker");
    Duration lease = Duration.ofMillis(number("leaseMs"));
    Duration wait = Duration.ofMillis(number("waitMs"));
    long holdMs = number("holdMs");
    LatchkeyOptions options =
        LatchkeyOptions.builder()
            .leaseTime(lease)
            .renewInterval(Duration.ofMillis(number("renewMs")))
            .operationTimeout(Duration.ofMillis(number("operationTimeoutMs")))
            .queueKeepAlive(lease)
            .closeOnShutdown(false)
            .build();
    SplittableRandom random = new SplittableRandom(worker * 31L + System.nanoTime());
    try (Latchkey latchkey = Latchkey.connect(required("uri"), options);
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
        say("ENTER " + System.nanoTime() + " " + token);
        held.onLost(lost -> say("LOST " + System.nanoTime() + " " + token));
        // Read, work, then write: a holder paused while it works comes back with an old token,
        // which the fenced register must refuse, and an increment that another holder overwrites.
        long seen = Long.parseLong(call(store, request, "GET").split(" ")[1]);
        LockSupport.parkNanos(
            Duration.ofMillis(holdMs / 2 + random.nextLong(holdMs + 1)).toNanos());
        String written = call(store, request, "WRITE " + token + " " + worker);
        say("WRITE " + System.nanoTime() + " " + token + " " + written.split(" ")[0]);
        call(store, request, "SET " + (seen + 1) + " " + worker);
        say("EXIT " + System.nanoTime() + " " + token + " " + held.isValid());
        say("RELEASED " + System.nanoTime() + " " + token + " " + release(held));
      }
    }
    say("STOPPED " + System.nanoTime());
  }

  private static Lease acquire(
      Latchkey latchkey, FaultMode mode, String name, Duration wait, Duration lease)
      throws InterruptedException {
    switch (mode) {
      case WATCHDOG_LOCK:
        return latchkey.lock(name).acquire(wait);
      case EXPLICIT_LEASE_LOCK:
        return latchkey.lock(name).acquire(wait, lease);
      case FAIR_LOCK:
        return latchkey.fairLock(name).acquire(wait);
      case LEASED_SEMAPHORE:
        LeasedSemaphore semaphore = latchkey.leasedSemaphore(name);
        // Every time: a server that lost its data forgets the number of permits too.
        semaphore.trySetPermits(1);
        return semaphore.acquire(wait);
      default:
        throw new IllegalArgumentException("unknown mode " + mode);
    }
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

  /** Reads {@code STOP}; the end of input means the harness is gone. */
  private void watchStandardInput() {
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                  if (line.trim().equals("STOP")) {
                    stopping = true;
                  }
                }
              } catch (IOException e) {
                // Treated as the end of input.
              }
              System.exit(3);
            },
            "fault-worker-stdin");
    reader.setDaemon(true);
    reader.start();
  }

  private String required(String key) {
    String value = args.get(key);
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException("missing argument " + key + "=");
    }
    return value;
  }

  private long number(String key) {
    return Long.parseLong(required(key));
  }

  private static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
