package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.OwnerToken;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A waiting acquire creates its node before it lists the lock's directory; an owner token that
 * another client holds the lock with already has a node ahead, and the new node gives way to it.
 */
class ZooKeeperSharedTokenTest {
  private static final String NAMESPACE = "shared-token";
  private static final Duration WAIT = Duration.ofSeconds(20);

  private TestingServer server;
  private CuratorFramework curator;
  private final List<Latchkey> clients = new ArrayList<>();

  @BeforeEach
  void start() throws InterruptedException {
    server = ZooKeeperTestServers.start();
    curator =
        CuratorFrameworkFactory.builder()
            .connectString(server.getConnectString())
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .build();
    curator.start();
    assertThat(curator.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
  }

  @AfterEach
  void stop() throws Exception {
    clients.forEach(Latchkey::close);
    curator.close();
    server.close();
  }

  @Test
  void aWaitingAcquireOfATokenHeldByAnotherClientReentersTheHoldersNode() throws Exception {
    String name = "orders/1";
    Latchkey first = connect();
    OwnerToken token = first.newOwnerToken();
    Lease outer = first.lock(name).withOwner(token).acquire(WAIT);

    Lease inner = connect().lock(name).withOwner(OwnerToken.parse(token.value())).acquire(WAIT);

    assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
    assertThat(lockNodes("/" + NAMESPACE)).as("the second node gave way").hasSize(1);
    DistributedLock stranger = connect().lock(name);
    inner.release();
    assertThat(stranger.tryLock()).as("the first client's hold is left").isFalse();
    outer.release();
    assertThat(stranger.tryLock()).isTrue();
    stranger.unlock();
  }

  private Latchkey connect() {
    Latchkey client =
        Latchkey.connect(ZooKeeperTestServers.uri(server.getConnectString(), NAMESPACE));
    clients.add(client);
    return client;
  }

  /** The lock nodes under a path (latchkey's are named {@code lk-}, its client records not). */
  private List<String> lockNodes(String path) throws Exception {
    List<String> found = new ArrayList<>();
    Stat stat = curator.checkExists().forPath(path);
    if (stat == null) {
      return found;
    }
    if (stat.getEphemeralOwner() != 0
        && path.substring(path.lastIndexOf('/') + 1).startsWith("lk-")) {
      found.add(path);
    }
    for (String child : curator.getChildren().forPath(path)) {
      found.addAll(lockNodes(path + "/" + child));
    }
    return found;
  }
}
