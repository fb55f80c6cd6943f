package io.latchkey.bench;

import io.latchkey.Latchkey;
import io.latchkey.bench.LockClients.Library;
import io.latchkey.servers.RedisTestServer;
import java.time.Duration;
import org.redisson.api.RedissonClient;

/**
 * What the watchdog costs: one client holds many locks taken without a lease (so the watchdog
 * renews them, a third of the lease apart in both libraries), and {@code INFO commandstats} counts
 * the script calls (EVALSHA and EVAL: round trips) over several renewal periods.
 *
 * <p>The lease is shortened to 3 s (a renewal every second) so that the window spans many periods
 * in a short run; the number of calls per period does not depend on the period. The count includes
 * latchkey's presence refresh, one EVALSHA per period.
 */
final class RenewalCounts {
  private RenewalCounts() {}

  /** What a run counted. */
  record Renewed(
      Library library,
      int locks,
      Duration period,
      int periods,
      double acquireSeconds,
      CommandStats stats) {
    /** Script calls in the window. */
    long roundTrips() {
      return stats.calls("evalsha") + stats.calls("eval");
    }

    /** Script calls per renewal period. */
    double roundTripsPerPeriod() {
      return roundTrips() / (double) periods;
    }

    /** The server time of one script call, on average (µs): how long Redis is blocked by it. */
    double usecPerCall() {
      long calls = roundTrips();
      return calls == 0 ? 0 : (stats.usec("evalsha") + stats.usec("eval")) / (double) calls;
    }
  }

  /**
   * Holds {@code locks} locks with one client and counts the script calls of {@code periods}
   * renewal periods.
   *
   * @param server the server, which nobody else uses meanwhile
   * @param library {@link Library#LATCHKEY} or {@link Library#REDISSON}
   * @param locks how many locks to hold
   * @param lease the watchdog lease; the period is a third of it
   * @param periods how many periods to count
   */
  static Renewed measure(
      RedisTestServer server, Library library, int locks, Duration lease, int periods)
      throws InterruptedException {
    Duration period = lease.dividedBy(3);
    String prefix = "renew:" + library.label() + ":" + System.nanoTime() + ":";
    try (LockClients clients = LockClients.open(library, 1, server.uri(), lease)) {
      long start = System.nanoTime();
      if (library == Library.LATCHKEY) {
        Latchkey latchkey = clients.latchkeys().get(0);
        for (int i = 0; i < locks; i++) {
          latchkey.lock(prefix + i).lock();
        }
      } else if (library == Library.REDISSON) {
        RedissonClient redisson = clients.redissons().get(0);
        for (int i = 0; i < locks; i++) {
          redisson.getLock(prefix + i).lock();
        }
      } else {
        throw new IllegalArgumentException("the floor holds no locks");
      }
      double acquireSeconds = (System.nanoTime() - start) / 1e9;
      // One period for the watchdog to settle into its rhythm after the acquisitions.
      Thread.sleep(period.toMillis());
      server.command("CONFIG", "RESETSTAT");
      Thread.sleep(period.multipliedBy(periods).toMillis());
      CommandStats stats = CommandStats.read(server);
      return new Renewed(library, locks, period, periods, acquireSeconds, stats);
      // Closing releases latchkey's holds; Redisson's expire with their lease.
    }
  }
}
