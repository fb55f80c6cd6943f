package io.latchkey.servers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * A real Redis Cluster for tests: by default three masters without replicas, every node a {@link
 * RedisTestServer} on a free loopback port (whose cluster bus port, port + 10000, was free too).
 *
 * <p>{@link #start()} assigns the 16384 slots in equal contiguous ranges to the masters, joins the
 * nodes with {@code CLUSTER MEET}, attaches replicas if any were asked for, and returns once every
 * node reports {@code cluster_state:ok}, knows every other node as healthy and every replica's link
 * to its master is up.
 *
 * <pre>{@code
 * try (RedisClusterTestServer cluster = RedisClusterTestServer.start()) {
 *   connect(cluster.hostAndPorts());             // ["127.0.0.1:p1", "127.0.0.1:p2", ...]
 *   RedisTestServer owner = cluster.masterFor("orders/42");
 *   owner.kill();
 *   owner.restart();                             // same port and node id, empty data
 *   cluster.awaitHealthy(Duration.ofSeconds(10));
 * }
 * }</pre>
 *
 * <p>Instances are thread-safe as far as their nodes are; {@link #close()} stops every node.
 */
public final class RedisClusterTestServer implements AutoCloseable {
  /** The number of hash slots of a Redis Cluster. */
  public static final int SLOTS = 16_384;

  private static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofSeconds(2);
  private static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(30);
  private static final Set<String> UNHEALTHY_FLAGS = Set.of("fail", "fail?", "handshake", "noaddr");

  private final List<RedisTestServer> masters;
  private final List<RedisTestServer> replicas;
  private final List<RedisTestServer> nodes;

  private RedisClusterTestServer(List<RedisTestServer> masters, List<RedisTestServer> replicas) {
    this.masters = List.copyOf(masters);
    this.replicas = List.copyOf(replicas);
    List<RedisTestServer> all = new ArrayList<>(masters);
    all.addAll(replicas);
    this.nodes = List.copyOf(all);
  }

  /**
   * Starts a cluster of three masters without replicas, using {@link RedisBinary#locate()}.
   *
   * @return the running cluster, in state {@code ok}
   * @throws IllegalStateException if no binary is found or the cluster does not form within 30 s
   */
  public static RedisClusterTestServer start() {
    return builder().start();
  }

  /**
   * Returns a builder for a cluster with options.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Returns every node: the masters first, then the replicas.
   *
   * @return the nodes, unmodifiable
   */
  public List<RedisTestServer> nodes() {
    return nodes;
  }

  /**
   * Returns the nodes started as masters. After a failover a replica may have taken over; use
   * {@link #masterFor(String)} for the node that serves a key now.
   *
   * @return the initial masters, unmodifiable, in slot order
   */
  public List<RedisTestServer> masters() {
    return masters;
  }

  /**
   * Returns the nodes started as replicas, {@code replicasPerMaster} for each master in master
   * order.
   *
   * @return the initial replicas, unmodifiable; empty by default
   */
  public List<RedisTestServer> replicas() {
    return replicas;
  }

  /**
   * Returns {@code host:port} of every node, masters first, for a client's seed list.
   *
   * @return for example {@code ["127.0.0.1:21001", "127.0.0.1:24312", "127.0.0.1:27450"]}
   */
  public List<String> hostAndPorts() {
    return nodes.stream()
        .map(RedisTestServer::hostAndPort)
        .collect(Collectors.toUnmodifiableList());
  }

  /**
   * Returns the URI of every node, masters first.
   *
   * @return for example {@code ["redis://127.0.0.1:21001", ...]}
   */
  public List<String> seedUris() {
    return nodes.stream().map(RedisTestServer::uri).collect(Collectors.toUnmodifiableList());
  }

  /**
   * Returns the node that currently serves the slot of {@code key} as master, asking a running node
   * ({@code CLUSTER KEYSLOT}, {@code CLUSTER SLOTS}).
   *
   * @param key a key, hash tags included
   * @return the master of the key's slot
   * @throws IllegalStateException if no node is running or no running master serves the slot
   */
  public RedisTestServer masterFor(String key) {
    RedisTestServer asked = runningNode();
    long slot = Replies.integer(asked.command("CLUSTER", "KEYSLOT", key), "CLUSTER KEYSLOT");
    for (Object range : Replies.list(asked.command("CLUSTER", "SLOTS"), "CLUSTER SLOTS")) {
      List<?> entry = Replies.list(range, "CLUSTER SLOTS entry");
      long first = Replies.integer(entry.get(0), "slot range start");
      long last = Replies.integer(entry.get(1), "slot range end");
      if (slot >= first && slot <= last) {
        long port = Replies.integer(Replies.list(entry.get(2), "master").get(1), "master port");
        Optional<RedisTestServer> owner = nodeAt(port);
        if (owner.isPresent()) {
          return owner.get();
        }
      }
    }
    throw new IllegalStateException("no known master serves slot " + slot + " of key " + key);
  }

  /**
   * Waits until every node runs, reports {@code cluster_state:ok} with all slots assigned and none
   * failing, sees every other node as connected and healthy, and every replica's link to its master
   * is up. Useful after a {@link RedisTestServer#restart()} of a node.
   *
   * @param timeout how long to wait at most
   * @throws IllegalStateException if the cluster is not healthy within {@code timeout}, or a node
   *     is not running
   */
  public void awaitHealthy(Duration timeout) {
    Polling.await(timeout, "the cluster to be healthy on every node", this::healthy);
  }

  /**
   * Stops every node and deletes their directories. Idempotent.
   *
   * @throws IllegalStateException if a node process survives SIGKILL
   */
  @Override
  public void close() {
    closeAll(nodes);
  }

  /**
   * Describes the cluster for messages.
   *
   * @return the nodes' addresses
   */
  @Override
  public String toString() {
    return "Redis Cluster " + hostAndPorts();
  }

  private boolean healthy() {
    int masterCount = masters.size();
    for (RedisTestServer node : nodes) {
      Map<String, String> info =
          RedisTestServer.parseInfo(String.valueOf(node.command("CLUSTER", "INFO")));
      if (!"ok".equals(info.get("cluster_state"))
          || !Integer.toString(SLOTS).equals(info.get("cluster_slots_assigned"))
          || !"0".equals(info.get("cluster_slots_pfail"))
          || !"0".equals(info.get("cluster_slots_fail"))) {
        return false;
      }
      List<String[]> known = clusterNodes(node);
      if (known.size() != nodes.size()) {
        return false;
      }
      int mastersSeen = 0;
      for (String[] entry : known) {
        Set<String> flags = Set.of(entry[2].split(","));
        if (flags.stream().anyMatch(UNHEALTHY_FLAGS::contains) || !"connected".equals(entry[7])) {
          return false;
        }
        if (flags.contains("master")) {
          mastersSeen++;
        }
      }
      if (mastersSeen != masterCount) {
        return false;
      }
      Map<String, String> replication = node.info("replication");
      if ("slave".equals(replication.get("role"))
          && !"up".equals(replication.get("master_link_status"))) {
        return false;
      }
    }
    return true;
  }

  /** Parses {@code CLUSTER NODES}: id, address, flags, master, ping, pong, epoch, link, slots. */
  private static List<String[]> clusterNodes(RedisTestServer node) {
    List<String[]> entries = new ArrayList<>();
    for (String line : String.valueOf(node.command("CLUSTER", "NODES")).split("\n", -1)) {
      String trimmed = line.trim();
      if (!trimmed.isEmpty()) {
        String[] fields = trimmed.split(" ");
        if (fields.length < 8) {
          throw new IllegalStateException("unexpected CLUSTER NODES line: " + trimmed);
        }
        entries.add(fields);
      }
    }
    return entries;
  }

  private RedisTestServer runningNode() {
    return nodes.stream()
        .filter(RedisTestServer::isRunning)
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no node of " + this + " is running"));
  }

  private Optional<RedisTestServer> nodeAt(long port) {
    return nodes.stream().filter(node -> node.port() == port).findFirst();
  }

  private static void closeAll(List<RedisTestServer> servers) {
    @Nullable RuntimeException failure = null;
    for (RedisTestServer server : servers) {
      try {
        server.close();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** Options for a {@link RedisClusterTestServer}. Not thread-safe. */
  public static final class Builder {
    private int masterCount = 3;
    private int replicasPerMaster;
    private @Nullable RedisBinary binary;
    private @Nullable String password;
    private Duration nodeTimeout = DEFAULT_NODE_TIMEOUT;
    private Duration startTimeout = DEFAULT_START_TIMEOUT;

    private Builder() {}

    /**
     * Sets the number of masters; the default is 3.
     *
     * @param count between 1 and 16
     * @return this builder
     */
    public Builder masters(int count) {
      if (count < 1 || count > 16) {
        throw new IllegalArgumentException("masters must be between 1 and 16: " + count);
      }
      this.masterCount = count;
      return this;
    }

    /**
     * Sets the number of replicas of each master; the default is 0.
     *
     * @param count between 0 and 4
     * @return this builder
     */
    public Builder replicasPerMaster(int count) {
      if (count < 0 || count > 4) {
        throw new IllegalArgumentException("replicas per master must be between 0 and 4: " + count);
      }
      this.replicasPerMaster = count;
      return this;
    }

    /**
     * Uses this executable instead of {@link RedisBinary#locate()}.
     *
     * @param binary the executable
     * @return this builder
     */
    public Builder binary(RedisBinary binary) {
      this.binary = Objects.requireNonNull(binary, "binary");
      return this;
    }

    /**
     * Protects every node's default user with a password (also used between master and replica).
     *
     * @param password the password, not empty
     * @return this builder
     */
    public Builder password(String password) {
      if (password.isEmpty()) {
        throw new IllegalArgumentException("password must not be empty");
      }
      this.password = password;
      return this;
    }

    /**
     * Sets {@code cluster-node-timeout}: how long a node may be unreachable before it is failed
     * and, with replicas, failed over. The default is 2 s, short for fast failover tests.
     *
     * @param timeout at least 100 ms
     * @return this builder
     */
    public Builder nodeTimeout(Duration timeout) {
      if (timeout.toMillis() < 100) {
        throw new IllegalArgumentException("node timeout must be at least 100 ms: " + timeout);
      }
      this.nodeTimeout = timeout;
      return this;
    }

    /**
     * Sets how long {@link #start()} waits for the cluster to form; the default is 30 s.
     *
     * @param timeout a positive duration
     * @return this builder
     */
    public Builder startTimeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("start timeout must be positive: " + timeout);
      }
      this.startTimeout = timeout;
      return this;
    }

    /**
     * Starts the nodes, forms the cluster and waits until it is healthy (see {@link
     * RedisClusterTestServer#awaitHealthy(Duration)}).
     *
     * @return the running cluster
     * @throws IllegalStateException if no binary is found, a node does not start, or the cluster
     *     does not form within the start timeout; nodes already started are stopped
     */
    public RedisClusterTestServer start() {
      RedisBinary chosen = binary != null ? binary : RedisBinary.locate();
      long deadline = System.nanoTime() + startTimeout.toNanos();
      List<RedisTestServer> startedMasters = new ArrayList<>();
      List<RedisTestServer> startedReplicas = new ArrayList<>();
      try {
        for (int i = 0; i < masterCount; i++) {
          startedMasters.add(startNode(chosen));
        }
        for (int i = 0; i < masterCount * replicasPerMaster; i++) {
          startedReplicas.add(startNode(chosen));
        }
        RedisClusterTestServer cluster =
            new RedisClusterTestServer(startedMasters, startedReplicas);
        form(cluster, chosen, deadline);
        return cluster;
      } catch (RuntimeException e) {
        List<RedisTestServer> started = new ArrayList<>(startedMasters);
        started.addAll(startedReplicas);
        try {
          closeAll(started);
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
        throw e;
      }
    }

    private RedisTestServer startNode(RedisBinary chosen) {
      RedisTestServer.Builder node =
          RedisTestServer.builder()
              .binary(chosen)
              .clusterBus()
              .config("cluster-enabled", "yes")
              .config("cluster-config-file", "nodes.conf")
              .config("cluster-node-timeout", Long.toString(nodeTimeout.toMillis()));
      if (password != null) {
        node.password(password);
      }
      return node.start();
    }

    private void form(RedisClusterTestServer cluster, RedisBinary chosen, long deadline) {
      List<RedisTestServer> nodes = cluster.nodes;
      List<String> ids = new ArrayList<>();
      for (RedisTestServer node : nodes) {
        ids.add(String.valueOf(node.command("CLUSTER", "MYID")));
      }
      for (int i = 0; i < masterCount; i++) {
        int first = i * SLOTS / masterCount;
        int last = (i + 1) * SLOTS / masterCount - 1;
        assignSlots(cluster.masters.get(i), chosen, first, last);
      }
      // Distinct epochs up front spare the nodes the slow collision-resolution protocol.
      for (int i = 0; i < nodes.size(); i++) {
        nodes.get(i).command("CLUSTER", "SET-CONFIG-EPOCH", Integer.toString(i + 1));
      }
      RedisTestServer introducer = nodes.get(0);
      for (RedisTestServer node : nodes.subList(1, nodes.size())) {
        introducer.command("CLUSTER", "MEET", RedisTestServer.HOST, Integer.toString(node.port()));
      }
      Polling.await(
          remaining(deadline),
          "every node of " + cluster + " to know the others",
          () -> {
            for (RedisTestServer node : nodes) {
              List<String[]> known = clusterNodes(node);
              if (known.size() != nodes.size()
                  || known.stream().anyMatch(entry -> entry[2].contains("handshake"))) {
                return false;
              }
            }
            return true;
          });
      for (int i = 0; i < cluster.replicas.size(); i++) {
        RedisTestServer replica = cluster.replicas.get(i);
        String masterId = ids.get(i / replicasPerMaster);
        // A replica may not have learned the master's id from gossip yet: retried until then.
        Polling.await(
            remaining(deadline),
            replica + " to replicate master " + masterId,
            () -> "OK".equals(replica.command("CLUSTER", "REPLICATE", masterId)));
      }
      Polling.await(remaining(deadline), cluster + " to be healthy", cluster::healthy);
    }

    private static void assignSlots(
        RedisTestServer master, RedisBinary chosen, int first, int last) {
      if (chosen.isAtLeast(7, 0)) {
        master.command("CLUSTER", "ADDSLOTSRANGE", Integer.toString(first), Integer.toString(last));
        return;
      }
      List<String> command = new ArrayList<>(Arrays.asList("CLUSTER", "ADDSLOTS"));
      for (int slot = first; slot <= last; slot++) {
        command.add(Integer.toString(slot));
      }
      master.command(command.toArray(new String[0]));
    }

    private static Duration remaining(long deadline) {
      return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }
  }
}
