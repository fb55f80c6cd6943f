package io.latchkey.cli;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
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
