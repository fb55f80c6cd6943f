package io.latchkey.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class RedisClusterTestServerTest {
  private static RedisClusterTestServer cluster;

  @BeforeAll
  static void startCluster() {
    cluster = RedisClusterTestServer.start();
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  @Test
  void everyNodeReportsClusterStateOk() {
    assertThat(cluster.nodes()).hasSize(3);
    assertThat(cluster.masters()).hasSize(3);
    assertThat(cluster.replicas()).isEmpty();
    for (RedisTestServer node : cluster.nodes()) {
      assertThat(node.port()).isNotEqualTo(6379);
      assertThat(RedisTestServer.parseInfo(String.valueOf(node.command("CLUSTER", "INFO"))))
          .containsEntry("cluster_state", "ok")
          .containsEntry("cluster_slots_assigned", "16384")
          .containsEntry("cluster_known_nodes", "3");
    }
    assertThat(cluster.hostAndPorts())
        .containsExactlyElementsOf(
            cluster.nodes().stream().map(n -> "127.0.0.1:" + n.port()).toList());
    assertThat(cluster.seedUris()).allMatch(uri -> uri.startsWith("redis://127.0.0.1:"));
  }

  @Test
  void theSlotsAreSplitAcrossTheMasters() {
    List<Long> starts = new ArrayList<>();
    Object slots = cluster.masters().get(0).command("CLUSTER", "SLOTS");
    for (Object range : Replies.list(slots, "CLUSTER SLOTS")) {
      starts.add(Replies.integer(Replies.list(range, "range").get(0), "start"));
    }
    assertThat(starts).containsExactlyInAnyOrder(0L, 5461L, 10922L);
  }

  @Test
  void aKeyIsServedByTheMasterOfItsSlotOnly() {
    RedisTestServer owner = cluster.masterFor("orders/42");
    assertThat(owner.command("SET", "orders/42", "locked")).isEqualTo("OK");

    RedisTestServer other =
        cluster.masters().stream().filter(node -> node != owner).findFirst().orElseThrow();
    assertThatThrownBy(() -> other.command("GET", "orders/42"))
        .isInstanceOfSatisfying(
            RedisErrorReplyException.class, e -> assertThat(e.errorCode()).isEqualTo("MOVED"));
  }

  @Test
  void aKilledMasterRejoinsWithItsIdentityAfterRestart() {
    RedisTestServer owner = cluster.masterFor("restart-me");
    Object id = owner.command("CLUSTER", "MYID");
    owner.command("SET", "restart-me", "1");

    owner.kill();
    owner.restart();
    cluster.awaitHealthy(Duration.ofSeconds(15));

    assertThat(owner.command("CLUSTER", "MYID")).isEqualTo(id);
    assertThat(cluster.masterFor("restart-me")).isSameAs(owner);
    assertThat(owner.command("GET", "restart-me")).isNull();
  }

  @Test
  void replicasFollowTheirMasters() {
    try (RedisClusterTestServer small =
        RedisClusterTestServer.builder().masters(1).replicasPerMaster(1).start()) {
      RedisTestServer master = small.masters().get(0);
      RedisTestServer replica = small.replicas().get(0);

      assertThat(replica.info("replication"))
          .containsEntry("role", "slave")
          .containsEntry("master_port", Integer.toString(master.port()))
          .containsEntry("master_link_status", "up");
      assertThat(small.masterFor("any")).isSameAs(master);
    }
  }
}
