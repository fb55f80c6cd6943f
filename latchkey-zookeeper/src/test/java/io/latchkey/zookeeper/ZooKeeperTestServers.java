package io.latchkey.zookeeper;

import io.latchkey.Feature;
import io.latchkey.spi.BackendFactory;
import io.latchkey.testkit.BackendFixture;
import java.net.URI;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.Stat;

/** In-process ZooKeeper servers for the tests, on free loopback ports. */
final class ZooKeeperTestServers {
  /**
   * A short tick, so that the tests may ask for short sessions: the server accepts session timeouts
   * from 2 to 20 ticks.
   */
  static final int TICK_MILLIS = 200;

  /** The session timeout the tests' clients ask for. */
  static final String SESSION_TIMEOUT = "3s";

  /** What the backend declares on a server that takes TTL nodes. */
  private static final Set<Feature> WITH_TTL_NODES = withTtlNodes();

  private ZooKeeperTestServers() {}

  private static Set<Feature> withTtlNodes() {
    Set<Feature> features = EnumSet.copyOf(ZooKeeperBackend.FEATURES);
    features.add(Feature.PERMIT_LEASE_TIME);
    return Set.copyOf(features);
  }

  /**
   * @return whether the servers started in this JVM take TTL nodes: the build turns them on for the
   *     whole test JVM (a server reads the property at every create)
   */
  static boolean ttlNodes() {
    return Boolean.getBoolean("zookeeper.extendedTypesEnabled");
  }

  /**
   * @return a started single server with a short tick and no limit on connections per address
   */
  static TestingServer start() {
    try {
      return new TestingServer(spec(), true);
    } catch (Exception e) {
      throw new IllegalStateException("cannot start a ZooKeeper test server", e);
    }
  }

  /**
   * @return the specification of one server on free ports
   */
  static InstanceSpec spec() {
    return new InstanceSpec(null, -1, -1, -1, true, -1, TICK_MILLIS, 0);
  }

  /**
   * @param connectString the servers
   * @param namespace the namespace
   * @return the URI the tests' clients connect with
   */
  static String uri(String connectString, String namespace) {
    return "zookeeper://" + connectString + "/" + namespace + "?sessionTimeout=" + SESSION_TIMEOUT;
  }

  /**
   * @param curator a client of the server, without a namespace
   * @param namespace the backend's namespace
   * @param node the stat of a lock node or permit node in it
   * @return the fencing token of a grant on that node without a raise offset: its creation zxid
   *     above the base of the data ({@link TokenBase})
   */
  static long fencingToken(CuratorFramework curator, String namespace, Stat node) throws Exception {
    Stat record = curator.checkExists().forPath("/" + namespace + ZooKeeperPaths.TOKEN_BASE);
    if (record == null) {
      throw new IllegalStateException("no token base in /" + namespace);
    }
    return TokenBase.ofRecord(record) + node.getCzxid();
  }

  /**
   * @param name the fixture's name in reports
   * @param uri the URI, read when a client opens
   * @return the kit's view of the servers, reachable from worker JVMs
   */
  static BackendFixture fixture(String name, Supplier<String> uri) {
    return new BackendFixture() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public BackendFactory backend() {
        return context -> ZooKeeperBackend.open(URI.create(uri.get()), context);
      }

      @Override
      public Set<Feature> features() {
        // Not an explicit lease on locks (session-bound nodes), push wake-ups (watches instead),
        // revocation, nor the newer synchronizer operations; explicit permit leases where the
        // servers of this JVM take TTL nodes.
        return ttlNodes() ? WITH_TTL_NODES : ZooKeeperBackend.FEATURES;
      }

      @Override
      public Optional<String> uri() {
        return Optional.of(uri.get());
      }
    };
  }
}
