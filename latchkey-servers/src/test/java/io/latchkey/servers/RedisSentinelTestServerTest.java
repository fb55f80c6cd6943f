package io.latchkey.servers;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class RedisSentinelTestServerTest {
  private static RedisSentinelTestServer sentinel;

  @BeforeAll
  static void startDeployment() {
    sentinel = RedisSentinelTestServer.start();
  }

  @AfterAll
  static void stopDeployment() {
    sentinel.close();
  }

  @Test
  void everySentinelNamesTheMaster() {
    RedisTestServer master = sentinel.master();
    assertThat(sentinel.masterName()).isEqualTo("mymaster");
    assertThat(sentinel.sentinelPorts()).hasSize(3).doesNotContain(6379, 26379);
    for (RedisTestServer node : sentinel.sentinels()) {
      assertThat(node.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"))
          .isEqualTo(List.of("127.0.0.1", Integer.toString(master.port())));
    }
    assertThat(sentinel.replica().info("replication"))
        .containsEntry("role", "slave")
        .containsEntry("master_port", Integer.toString(master.port()))
        .containsEntry("master_link_status", "up");
  }

  @Test
  void failoverPromotesTheReplica() {
    RedisTestServer oldMaster = sentinel.master();
    RedisTestServer oldReplica = sentinel.replica();
    oldMaster.command("SET", "key", "value");

    RedisTestServer promoted = sentinel.failover();

    assertThat(promoted).isSameAs(oldReplica);
    assertThat(sentinel.master()).isSameAs(oldReplica);
    assertThat(oldReplica.info("replication")).containsEntry("role", "master");
    assertThat(oldReplica.command("GET", "key")).isEqualTo("value");
    assertThat(oldMaster.info("replication"))
        .containsEntry("role", "slave")
        .containsEntry("master_port", Integer.toString(oldReplica.port()))
        .containsEntry("master_link_status", "up");
  }

  @Test
  void theSentinelsFailOverACrashedMaster() {
    RedisTestServer crashed = sentinel.master();
    RedisTestServer survivor = sentinel.replica();

    crashed.kill();

    sentinel.awaitMaster(survivor, Duration.ofSeconds(15));
    assertThat(sentinel.master()).isSameAs(survivor);
    assertThat(survivor.info("replication")).containsEntry("role", "master");

    crashed.restart();
    sentinel.awaitHealthy(Duration.ofSeconds(30));
    assertThat(sentinel.replica()).isSameAs(crashed);
  }

  @Test
  void aPasswordProtectedDeploymentWorks() {
    try (RedisSentinelTestServer secured =
        RedisSentinelTestServer.builder()
            .password("pw")
            .sentinels(1)
            .masterName("secured")
            .start()) {
      assertThat(secured.master().password()).contains("pw");
      assertThat(secured.replica().info("replication")).containsEntry("master_link_status", "up");
      assertThat(secured.failover()).isNotNull();
    }
  }
}
