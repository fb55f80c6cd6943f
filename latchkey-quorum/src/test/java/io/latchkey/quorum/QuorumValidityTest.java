package io.latchkey.quorum;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.servers.FreezableTcpProxy;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A grant's validity as the engine keeps it: counted once from when the attempt was sent, however
 * long the members took to answer; and renewed without waiting for a member that does not answer.
 */
class QuorumValidityTest {
  private static final Duration ONE_WAY = Duration.ofMillis(100);

  private final List<AutoCloseable> opened = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
  }

  /** Three redis-servers behind proxies that hold every byte 100 ms each way: 200 ms a call. */
  @Test
  void aSlowAttemptsLeaseIsCountedFromWhenItWasSentNotFromWhenItWasDecided() throws Exception {
    Latchkey client =
        Latchkey.connect(
            slowQuorum(3) + ";maxLease=1m",
            LatchkeyOptions.builder().operationTimeout(Duration.ofSeconds(5)).build());
    opened.add(client);
    Duration lease = Duration.ofSeconds(5);

    long before = System.nanoTime();
    Lease held = client.lock("slow").acquire(Duration.ofSeconds(5), lease);
    Duration remaining = held.remaining();
    long after = System.nanoTime();

    // The lease ends by this client's clock at most at after + remaining. Counted from the send
    // (after "before"), less the quorum's and the engine's drift allowances (1% + 2 ms each), it
    // ends no earlier than before + lease - 2 × 52 ms (5 ms more for rounding). Counting the
    // attempt's own time (>= 200 ms here) a second time, as the quorum did, ends it that much
    // earlier.
    Duration drift = Duration.ofMillis(lease.toMillis() / 100 + 2);
    assertThat(Duration.ofNanos(after - before).plus(remaining))
        .isGreaterThanOrEqualTo(lease.minus(drift.multipliedBy(2)).minusMillis(5));
    held.release();
  }

  @Test
  void aFrozenMemberDoesNotHoldBackTheRenewalOfAShortWatchdogLease() throws Exception {
    RedisQuorum servers = RedisQuorum.start(3);
    opened.add(servers);
    FreezableTcpProxy proxy =
        FreezableTcpProxy.start(servers.member(2).host(), servers.member(2).port());
    opened.add(proxy);
    String uri =
        "quorum:"
            + servers.member(0).uri()
            + ","
            + servers.member(1).uri()
            + ",redis://"
            + proxy.host()
            + ":"
            + proxy.port()
            + ";maxLease=5s";
    // A renewal round that waited for every member would answer only at its bound, 80% of the
    // operation timeout (4 s): long after the 1 s lease it renews.
    Latchkey client =
        Latchkey.connect(
            uri,
            LatchkeyOptions.builder()
                .leaseTime(Duration.ofSeconds(1))
                .operationTimeout(Duration.ofSeconds(5))
                .build());
    opened.add(client);

    Lease lease = client.lock("renewed").acquire(Duration.ofSeconds(5));
    proxy.freeze();

    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(6)).until(lease::isValid);
    proxy.unfreeze();
    lease.release();
  }

  /** A quorum URI of {@code members} redis-servers, each behind a delaying proxy. */
  private String slowQuorum(int members) throws IOException {
    RedisQuorum servers = RedisQuorum.start(members);
    opened.add(servers);
    List<String> uris = new ArrayList<>();
    for (int i = 0; i < members; i++) {
      FreezableTcpProxy proxy =
          FreezableTcpProxy.start(servers.member(i).host(), servers.member(i).port(), ONE_WAY);
      opened.add(proxy);
      uris.add("redis://" + proxy.host() + ":" + proxy.port());
    }
    return "quorum:" + String.join(",", uris);
  }
}
