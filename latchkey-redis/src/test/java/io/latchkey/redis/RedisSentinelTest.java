package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.servers.RedisSentinelTestServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A Sentinel deployment (master, replica, three sentinels) that the test starts itself. */
class RedisSentinelTest {
  @Test
  void locksThroughTheSentinelsAndKeepsLockingAfterAFailover() throws InterruptedException {
    try (RedisSentinelTestServer sentinels = RedisSentinelTestServer.start();
        Latchkey client =
            Latchkey.connect(
                "redis-sentinel://"
                    + String.join(",", sentinels.sentinelHostAndPorts())
                    + "#"
                    + sentinels.masterName(),
                LatchkeyOptions.builder()
                    .leaseTime(Duration.ofSeconds(5))
                    .operationTimeout(Duration.ofSeconds(1))
                    .closeOnShutdown(false)
                    .build())) {
      DistributedLock lock = client.lock("sentinel");
      long before;
      try (Lease lease = lock.acquire(Duration.ZERO)) {
        before = lease.fencingToken();
      }
      assertThat(client.backendDescription()).startsWith("redis-sentinel://").endsWith("#mymaster");

      sentinels.failover();

      await()
          .atMost(Duration.ofSeconds(15))
          .pollInSameThread()
          .ignoreExceptions()
          .until(lock::tryLock);
      assertThat(lock.holdCount()).isOne();
      lock.unlock();
      try (Lease lease = lock.acquire(Duration.ZERO)) {
        assertThat(lease.fencingToken()).isGreaterThan(before);
      }
    }
  }
}
