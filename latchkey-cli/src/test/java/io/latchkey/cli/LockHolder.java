package io.latchkey.cli;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A lock holder in a JVM of its own, for the reaper tests: a client whose presence record lives
 * only {@code clientLeaseMs} plus a third after the process dies, holding one lock for a long
 * explicit lease. Arguments: {@code uri name leaseMs clientLeaseMs}. Prints {@code HELD <clientId>
 * <owner>} once it holds the lock, then holds it until its standard input ends (the test is done or
 * gone) or for at most five minutes.
 */
final class LockHolder {
  private LockHolder() {}

  /** A started holder JVM, and the id of its client. */
  record Started(Process process, String clientId) {}

  /**
   * Starts a holder JVM and waits until it holds its lock; the caller kills it.
   *
   * @param lease the explicit lease of its lock
   * @param clientLease the lease of its client's presence record
   */
  static Started start(String uri, String name, Duration lease, Duration clientLease)
      throws Exception {
    List<String> command =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp",
            System.getProperty("java.class.path"),
            LockHolder.class.getName(),
            uri,
            name,
            Long.toString(lease.toMillis()),
            Long.toString(clientLease.toMillis()));
    Process process =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    BufferedReader output =
        new BufferedReader(new InputStreamReader(process.getInputStream(), UTF_8));
    String line;
    try {
      line =
          CompletableFuture.supplyAsync(
                  () -> {
                    try {
                      return output.readLine();
                    } catch (IOException e) {
                      throw new UncheckedIOException(e);
                    }
                  })
              .get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      Cli.kill(process);
      throw e;
    }
    if (line == null || !line.startsWith("HELD ")) {
      Cli.kill(process);
      throw new AssertionError("the holder of " + name + " said: " + line);
    }
    return new Started(process, line.split(" ", -1)[1]);
  }

  /**
   * Holds a lock as described above.
   *
   * @param args {@code uri name leaseMs clientLeaseMs}
   */
  public static void main(String[] args) throws Exception {
    LatchkeyOptions options =
        LatchkeyOptions.builder()
            .leaseTime(Duration.ofMillis(Long.parseLong(args[3])))
            .closeOnShutdown(true)
            .build();
    try (Latchkey latchkey = Latchkey.connect(args[0], options)) {
      Lease lease =
          latchkey
              .lock(args[1])
              .acquire(Duration.ofSeconds(10), Duration.ofMillis(Long.parseLong(args[2])));
      System.out.println("HELD " + latchkey.clientId() + " " + lease.holderId());
      System.out.flush();
      Thread reader =
          new Thread(
              () -> {
                try (BufferedReader in =
                    new BufferedReader(new InputStreamReader(System.in, UTF_8))) {
                  while (in.readLine() != null) {
                    // Only the end of input matters.
                  }
                } catch (java.io.IOException e) {
                  // Taken as the end of input.
                }
              });
      reader.setDaemon(true);
      reader.start();
      reader.join(TimeUnit.MINUTES.toMillis(5));
      if (reader.isAlive()) {
        throw new TimeoutException("held for five minutes without being stopped");
      }
    }
  }
}
