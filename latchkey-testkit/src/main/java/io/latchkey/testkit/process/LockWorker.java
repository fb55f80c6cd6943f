package io.latchkey.testkit.process;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
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
 * hold} optionally {@code leaseMs=} an explicit lease (else the watchdog keeps it).
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
 *   <li>{@code ERROR <message>} and exit 1 on any failure, including a lease lost while
 *       incrementing.
 * </ul>
 *
 * When standard input reaches its end (the test JVM is gone) the worker exits, so that a crashed
 * test leaves no process behind.
 */
public final class LockWorker {
  private final Map<String, String> args;
  private final CountDownLatch go = new CountDownLatch(1);

  private LockWorker(Map<String, String> args) {
    this.args = args;
  }

  /**
   * @param argv {@code key=value} arguments, see the class documentation
   */
  public static void main(String[] argv) {
    Map<String, String> args = new HashMap<>();
    for (String arg : argv) {
      int eq = arg.indexOf('=');
      if (eq <= 0) {
        fail("argument is not key=value: " + arg, null);
        return;
      }
      args.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    try {
      new LockWorker(args).run();
    } catch (Throwable e) {
      fail(e.toString(), e);
    }
  }

  private void run() throws Exception {
    watchStandardInput();
    long watchdogLease = number("watchdogLeaseMs", 2000);
    LatchkeyOptions.Builder options =
        LatchkeyOptions.builder()
            .leaseTime(Duration.ofMillis(watchdogLease))
            .renewInterval(Duration.ofMillis(number("renewMs", Math.max(10, watchdogLease / 3))))
            .closeOnShutdown(true);
    String mode = required("mode");
    try (Latchkey latchkey = Latchkey.connect(required("uri"), options.build())) {
      say("READY " + latchkey.clientId());
      switch (mode) {
        case "increment" -> increment(latchkey);
        case "hold" -> hold(latchkey);
        default -> throw new IllegalArgumentException("unknown mode: " + mode);
      }
    }
    System.exit(0);
  }

  private void increment(Latchkey latchkey) throws Exception {
    Path counter = Path.of(required("counter"));
    String name = required("lock");
    int threads = (int) number("threads", 4);
    long iterations = number("iterations", 50);
    Duration wait = Duration.ofMillis(number("waitMs", 60_000));
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
      fail(failed.toString(), failed);
    }
    say("DONE " + threads * iterations);
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
    DistributedLock lock = latchkey.lock(required("lock"));
    Duration wait = Duration.ofMillis(number("waitMs", 60_000));
    String lease = args.get("leaseMs");
    Lease held =
        lease == null
            ? lock.acquire(wait)
            : lock.acquire(wait, Duration.ofMillis(Long.parseLong(lease)));
    say("ACQUIRED " + held.fencingToken() + " " + latchkey.clientId() + " " + held.holderId());
    new CountDownLatch(1).await();
  }

  /** Reads commands ({@code GO}); the end of input means the test JVM is gone. */
  private void watchStandardInput() {
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                  if (line.trim().equals("GO")) {
                    go.countDown();
                  }
                }
              } catch (IOException e) {
                // Treated as the end of input.
              }
              System.exit(3);
            },
            "worker-stdin");
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

  private long number(String key, long fallback) {
    String value = args.get(key);
    return value == null ? fallback : Long.parseLong(value);
  }

  private static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  private static void fail(String message, @Nullable Throwable cause) {
    if (cause != null) {
      cause.printStackTrace();
    }
    say("ERROR " + message.replace('\n', ' '));
    System.exit(1);
  }
}
