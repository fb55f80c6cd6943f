package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.BackendUnavailableException;
import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeasedSemaphore;
import io.latchkey.servers.RedisSentinelTestServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A Sentinel deployment (master, replica, three sentinels) that each test starts itself: fail-over,
 * and grants that wait for the replica.
 */
class RedisSentinelTest {
  private static LatchkeyOptions options() {
    return LatchkeyOptions.builder()
        .leaseTime(Duration.ofSeconds(5))
        .operationTimeout(Duration.ofSeconds(2))
        .closeOnShutdown(false)
        .build();
  }

  @Test
  void locksThroughTheSentinelsAndKeepsLockingAfterAFailover() throws InterruptedException {
    try (RedisSentinelTestServer sentinels = RedisSentinelTestServer.start();
        Latchkey client =
            Latchkey.connect(RedisSentinelConformanceTest.sentinelUri(sentinels), options())) {
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

  @Test
  void grantsWaitForTheReplicaAndFailClearlyWhenTooFewAcknowledge() throws InterruptedException {
    try (RedisSentinelTestServer sentinels = RedisSentinelTestServer.start()) {
      String hosts = "redis-sentinel://" + String.join(",", sentinels.sentinelHostAndPorts());
      String master = "#" + sentinels.masterName();
      try (Latchkey waitsForOne =
              Latchkey.connect(hosts + "?waitReplicas=1&waitTimeout=1s" + master, options());
          Latchkey waitsForTwo =
              Latchkey.connect(hosts + "?waitReplicas=2&waitTimeout=200ms" + master, options());
          Latchkey plain = Latchkey.connect(hosts + master, options())) {
        try (Lease lease = waitsForOne.lock("replicated").acquire(Duration.ZERO)) {
          assertThat(lease.isValid()).isTrue();
          assertThat(
                  sentinels
                      .dataNodes()
                      .get(1)
                      .command("EXISTS", new RedisKeys("latchkey:").lock("replicated")))
              .as("the grant reached the replica")
              .isEqualTo(1L);
        }
        LeasedSemaphore permits = waitsForOne.leasedSemaphore("replicated");
        assertThat(permits.trySetPermits(1)).isTrue();
        permits.acquire(Duration.ZERO).release();

        assertThatThrownBy(() -> waitsForTwo.lock("unreplicated").acquire(Duration.ZERO))
            .isInstanceOf(BackendUnavailableException.class)
            .hasMessageContaining(waitsForTwo.backendDescription())
            .hasMessageContaining(
                "only 1 of the 2 replicas required (waitReplicas) acknowledged the grant of"
                    + " lock 'unreplicated' within 200 ms; the grant was undone");
        assertThat(plain.admin().inspect("unreplicated")).isEmpty();
        assertThat(plain.lock("unreplicated").tryLock()).isTrue();
        plain.lock("unreplicated").unlock();
        assertThat(waitsForTwo.semaphore("unreplicated").trySetPermits(1)).isTrue();
        assertThatThrownBy(() -> waitsForTwo.semaphore("unreplicated").tryAcquire(1))
            .isInstanceOf(BackendUnavailableException.class)
            .hasMessageContaining("semaphore 'unreplicated'");
        assertThat(plain.semaphore("unreplicated").availablePermits()).isOne();
      }
    }
  }
}
