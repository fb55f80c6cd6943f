package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import java.time.Duration;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Digest credentials in the URI ({@code zookeeper://user:password@...}): every node latchkey
 * creates gives that user alone every right. Clients with the same credentials share locks as
 * usual; a client without them can neither read, change nor delete a holder's node, so it cannot
 * break a lock by hand; latchkey with other credentials is refused clearly, within its bound.
 */
class ZooKeeperAclTest {
  private static TestingServer server;

  @BeforeAll
  static void startServer() {
    server = ZooKeeperTestServers.start();
  }

  @AfterAll
  static void stopServer() throws Exception {
    server.close();
  }

  @Test
  void clientsWithTheCredentialsShareLocksAndOthersCannotTouchTheNodes() throws Exception {
    String uri = uri("app:s3cret", "acl-shared");
    try (Latchkey first = connect(uri);
        Latchkey second = connect(uri);
        CuratorFramework authenticated = curator("app:s3cret");
        CuratorFramework anonymous = curator(null)) {
      Lease held = first.lock("orders/42").acquire(Duration.ZERO);
      assertThat(second.lock("orders/42").tryAcquire()).isEmpty();

      String node = onlyLockNode(authenticated, "/acl-shared/locks");
      assertThat(authenticated.getACL().forPath(node))
          .singleElement()
          .satisfies(
              entry -> {
                assertThat(entry.getId().getScheme()).isEqualTo("digest");
                assertThat(entry.getId().getId()).startsWith("app:");
                assertThat(entry.getPerms()).isEqualTo(ZooDefs.Perms.ALL);
              });
      assertThatThrownBy(() -> anonymous.getChildren().forPath("/acl-shared/locks"))
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(() -> anonymous.getData().forPath(node))
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(() -> anonymous.setData().forPath(node, new byte[0]))
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(() -> anonymous.delete().forPath(node))
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThat(held.isValid()).isTrue();

      held.release();
      assertThat(second.lock("orders/42").tryAcquire())
          .hasValueSatisfying(lease -> assertThat(lease.fencingToken()).isGreaterThan(0));
    }
  }

  @Test
  void otherCredentialsAreRefusedWithinTheBound() throws Exception {
    try (Latchkey owner = connect(uri("app:s3cret", "acl-refused"))) {
      owner.lock("report").acquire(Duration.ZERO).release();
    }
    long start = System.nanoTime();
    try (Latchkey intruder = connect(uri("app:wrong", "acl-refused"))) {
      assertThatThrownBy(() -> intruder.lock("report").acquire(Duration.ZERO))
          .isInstanceOf(io.latchkey.BackendUnavailableException.class)
          .hasMessageContaining("NoAuth");
    }
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
  }

  /**
   * A client that may not create the record of the tokens' base ({@code /token-base}, at the
   * namespace's root) fails its acquire before it writes anything: the base is read before the
   * lock's node is made, so that no grant is written whose token could not be told (a grant kept
   * and then failed would be made again as a second hold).
   */
  @Test
  void aClientThatMayNotCreateTheTokenBaseFailsBeforeItWritesAnything() throws Exception {
    Id app = new Id("digest", DigestAuthenticationProvider.generateDigest("app:s3cret"));
    try (CuratorFramework authenticated = curator("app:s3cret")) {
      authenticated.create().withACL(List.of(new ACL(ZooDefs.Perms.ALL, app))).forPath("/no-base");
      for (String open : List.of("/no-base/locks", "/no-base/clients", "/no-base/clock")) {
        authenticated.create().withACL(List.of(new ACL(ZooDefs.Perms.ALL, app))).forPath(open);
      }
      // The root stays readable, not writable: /token-base cannot be made there.
      authenticated.setACL().withACL(List.of(new ACL(ZooDefs.Perms.READ, app))).forPath("/no-base");

      try (Latchkey client = connect(uri("app:s3cret", "no-base"))) {
        for (int attempt = 0; attempt < 2; attempt++) {
          assertThatThrownBy(() -> client.lock("report").acquire(Duration.ZERO))
              .isInstanceOf(io.latchkey.BackendUnavailableException.class)
              .hasMessageContaining("NoAuth");
        }
      }
      assertThat(authenticated.getChildren().forPath("/no-base/locks"))
          .as("no lock directory nor node was written")
          .isEmpty();
    }
  }

  /** The one holder node under the lock directories below {@code locks}. */
  private static String onlyLockNode(CuratorFramework client, String locks) throws Exception {
    List<String> directories = client.getChildren().forPath(locks);
    assertThat(directories).hasSize(1);
    String directory = locks + "/" + directories.get(0);
    List<String> nodes = client.getChildren().forPath(directory);
    assertThat(nodes).hasSize(1);
    return directory + "/" + nodes.get(0);
  }

  private static String uri(String credentials, String namespace) {
    return "zookeeper://"
        + credentials
        + "@"
        + server.getConnectString()
        + "/"
        + namespace
        + "?sessionTimeout="
        + ZooKeeperTestServers.SESSION_TIMEOUT;
  }

  private static Latchkey connect(String uri) {
    return Latchkey.connect(
        uri,
        LatchkeyOptions.builder()
            .operationTimeout(Duration.ofSeconds(2))
            .closeOnShutdown(false)
            .build());
  }

  private static CuratorFramework curator(@org.jspecify.annotations.Nullable String credentials) {
    CuratorFrameworkFactory.Builder builder =
        CuratorFrameworkFactory.builder()
            .connectString(server.getConnectString())
            .retryPolicy(new RetryNTimes(3, 100));
    if (credentials != null) {
      builder.authorization(
          "digest", credentials.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    CuratorFramework client = builder.build();
    client.start();
    return client;
  }
}
