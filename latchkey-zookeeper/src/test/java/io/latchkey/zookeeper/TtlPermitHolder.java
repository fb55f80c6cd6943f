package io.latchkey.zookeeper;

import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LeasedSemaphore;
import java.io.IOException;
import java.time.Duration;

/**
 * The main class of a JVM that takes one permit of a leased semaphore with an explicit lease and
 * keeps it until the test kills the JVM: {@code TtlPermitHolder {uri} {semaphore} {lease ms}}. It
 * prints {@code HELD {permit id} {fencing token} {client id}} once it holds the permit.
 */
final class TtlPermitHolder {
  private TtlPermitHolder() {}

  public static void main(String[] args) throws IOException, InterruptedException {
    try (Latchkey latchkey = Latchkey.connect(args[0])) {
      LeasedSemaphore semaphore = latchkey.leasedSemaphore(args[1]);
      semaphore.trySetPermits(1);
      Lease permit =
          semaphore.acquire(Duration.ofSeconds(30), Duration.ofMillis(Long.parseLong(args[2])));
      System.out.println(
          "HELD " + permit.holderId() + " " + permit.fencingToken() + " " + latchkey.clientId());
      System.out.flush();
      while (System.in.read() >= 0) {
        // Hold until killed (or until the test JVM closes the pipe).
      }
    }
  }
}
