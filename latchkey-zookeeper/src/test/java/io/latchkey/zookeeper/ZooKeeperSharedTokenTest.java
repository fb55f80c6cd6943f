package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.HolderInfo;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LockInfo;
import io.latchkey.OwnerToken;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.test.TestingServer;
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
  private final List<Latchkey> clients = new ArrayList<>();

  @BeforeEach
  void start() {
    server = ZooKeeperTestServers.start();
  }

  @AfterEach
  void stop() throws Exception {
    clients.forEach(Latchkey::close);
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
    LockInfo info = first.admin().inspect(name).orElseThrow();
    assertThat(info.queuedWaiters()).as("the second node gave way").isZero();
    assertThat(info.holders()).extracting(HolderInfo::holds).containsExactly(2);
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
}
