package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.BackendUnavailableException;
import io.latchkey.DistributedSemaphore;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.servers.RedisTestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code waitReplicas} on a real master and replica: the wait for replicas never holds up the
 * commands of other callers, a grant is covered by the wait, and a wait that cannot end before the
 * operation timeout is refused at connect.
 */
class RedisReplicaWaitTest {
  private static @Nullable RedisTestServer master;
  private static @Nullable RedisTestServer replica;

  @BeforeAll
  static void startMasterAndReplica() {
    RedisTestServer started = RedisTestServer.start();
    master = started;
    replica =
        RedisTestServer.builder()
            .config("replicaof", started.host(), Integer.toString(started.port()))
            .start();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                String.valueOf(started.info("replication").get("slave0")).contains("state=online"));
  }

  @AfterAll
  static void stop() {
    if (replica != null) {
      replica.close();
    }
    if (master != null) {
      master.close();
    }
  }

  private static RedisTestServer master() {
    if (master == null) {
      throw new IllegalStateException("not started");
    }
    return master;
  }

  private static Latchkey connect(String query, Duration operationTimeout) {
    return Latchkey.connect(
        master().uri() + query,
        LatchkeyOptions.builder()
            .operationTimeout(operationTimeout)
            .closeOnShutdown(false)
            .build());
  }

  @Test
  void grantsWaitingForReplicasDoNotHoldUpOtherCommands() throws Exception {
    // Two replicas required, one there: every grant waits the whole waitTimeout, then is undone.
    // The one replica may itself be too slow to acknowledge within 500 ms on a loaded machine.
    try (Latchkey client = connect("?waitReplicas=2&waitTimeout=500ms", Duration.ofSeconds(2))) {
      DistributedSemaphore unrelated = client.semaphore("unrelated");
      unrelated.trySetPermits(3);
      List<CompletableFuture<Lease>> grants = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        grants.add(client.lock("waiting-" + i).acquireAsync(Duration.ZERO).toCompletableFuture());
      }

      // Each of these would queue behind eight WAITs of 500 ms on a shared connection.
      for (int i = 0; i < 3; i++) {
        assertThat(unrelated.availablePermits()).isEqualTo(3);
      }
      for (CompletableFuture<Lease> grant : grants) {
        assertThatThrownBy(() -> grant.get(10, TimeUnit.SECONDS))
            .isInstanceOf(ExecutionException.class)
            .cause()
            .isInstanceOf(BackendUnavailableException.class)
            .hasMessageMatching("(?s).*only [01] of the 2 replicas required \\(waitReplicas\\).*")
            .hasMessageContaining("the grant was undone");
      }
      for (int i = 0; i < 8; i++) {
        assertThat(client.admin().inspect("waiting-" + i)).as("undone").isEmpty();
      }
    }
  }

  @Test
  void aGrantIsOnTheReplicaWhenItsWaitReturns() throws InterruptedException {
    RedisKeys keys = new RedisKeys(RedisConnectionSettings.DEFAULT_PREFIX);
    try (Latchkey client = connect("?waitReplicas=1&waitTimeout=1s", Duration.ofSeconds(3))) {
      for (int i = 0; i < 20; i++) {
        Lease lease = client.lock("replicated-" + i).acquire(Duration.ZERO);
        assertThat(replica().command("EXISTS", keys.lock("replicated-" + i)))
            .as("grant %s on the replica", i)
            .isEqualTo(1L);
        lease.release();
      }
    }
  }

  @Test
  void aWaitTimeoutNotBelowTheOperationTimeoutIsRefusedAtConnect() {
    assertThatThrownBy(() -> connect("?waitReplicas=1&waitTimeout=2s", Duration.ofSeconds(2)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("waitTimeout (2000 ms) must be shorter than the operation timeout");
  }

  private static RedisTestServer replica() {
    if (replica == null) {
      throw new IllegalStateException("not started");
    }
    return replica;
  }
}
