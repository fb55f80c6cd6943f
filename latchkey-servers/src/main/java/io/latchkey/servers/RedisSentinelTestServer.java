package io.latchkey.servers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * A real Redis Sentinel deployment for tests: one master, one replica and (by default) three
 * sentinels, every process a {@link RedisTestServer} on a free loopback port.
 *
 * <p>The sentinels monitor the master under {@link #masterName()} with a quorum of a majority,
 * {@code down-after-milliseconds} of 1 s and a short {@code failover-timeout}, so that a killed
 * master is failed over within a few seconds. {@link #start()} returns once every sentinel knows
 * the master, the replica and the other sentinels, and the replica's link to the master is up.
 *
 * <p>With Redis 7 or later, every sentinel is also told ({@code SENTINEL DEBUG}) to poll INFO every
 * second instead of every 10 s, to publish hello messages every 500 ms and to leave TILT mode after
 * 5 s, so that what a test waits for happens within a few seconds. Redis 6.2 keeps the default
 * periods: a test then waits up to about 20 s where the sentinels must notice a change by polling
 * (a restarted old master, for example).
 *
 * <pre>{@code
 * try (RedisSentinelTestServer sentinel = RedisSentinelTestServer.start()) {
 *   connect(sentinel.sentinelHostAndPorts(), sentinel.masterName());
 *   RedisTestServer promoted = sentinel.failover();  // the old replica, now master
 *   sentinel.master().kill();                        // or let the sentinels fail over a crash
 * }
 * }</pre>
 *
 * <p>Instances are thread-safe as far as their processes are; {@link #close()} stops them all.
 */
public final class RedisSentinelTestServer implements AutoCloseable {
  /** The master name used unless {@link Builder#masterName(String)} sets another. */
  public static final String DEFAULT_MASTER_NAME = "mymaster";

  private static final Duration DEFAULT_DOWN_AFTER = Duration.ofSeconds(1);
  private static final Duration DEFAULT_FAILOVER_TIMEOUT = Duration.ofSeconds(3);
  private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

  private final String masterName;
  private final List<RedisTestServer> dataNodes;
  private final List<RedisTestServer> sentinels;
  private final Duration timeout;

  private RedisSentinelTestServer(
      String masterName,
      List<RedisTestServer> dataNodes,
      List<RedisTestServer> sentinels,
      Duration timeout) {
    this.masterName = masterName;
    this.dataNodes = List.copyOf(dataNodes);
    this.sentinels = List.copyOf(sentinels);
    this.timeout = timeout;
  }

  /**
   * Starts a master, a replica and three sentinels with default settings, using {@link
   * RedisBinary#locate()}.
   *
   * @return the running deployment, healthy
   * @throws IllegalStateException if no binary is found or the deployment is not healthy within 30
   *     s
   */
  public static RedisSentinelTestServer start() {
    return builder().start();
  }

  /**
   * Returns a builder for a deployment with options.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Returns the name under which the sentinels monitor the master.
   *
   * @return the master name, {@value #DEFAULT_MASTER_NAME} by default
   */
  public String masterName() {
    return masterName;
  }

  /**
   * Returns the sentinel processes.
   *
   * @return the sentinels, unmodifiable
   */
  public List<RedisTestServer> sentinels() {
    return sentinels;
  }

  /**
   * Returns the sentinels' ports.
   *
   * @return the ports, in the order of {@link #sentinels()}
   */
  public List<Integer> sentinelPorts() {
    return sentinels.stream().map(RedisTestServer::port).collect(Collectors.toUnmodifiableList());
  }

  /**
   * Returns {@code host:port} of every sentinel.
   *
   * @return for example {@code ["127.0.0.1:26001", "127.0.0.1:23412", "127.0.0.1:28770"]}
   */
  public List<String> sentinelHostAndPorts() {
    return sentinels.stream()
        .map(RedisTestServer::hostAndPort)
        .collect(Collectors.toUnmodifiableList());
  }

  /**
   * Returns both data nodes: the one started as master, then the one started as replica.
   *
   * @return the data nodes, unmodifiable
   */
  public List<RedisTestServer> dataNodes() {
    return dataNodes;
  }

  /**
   * Returns the data node that the sentinels currently report as master ({@code SENTINEL
   * get-master-addr-by-name}), asking the running sentinels in order until one answers.
   *
   * @return the current master
   * @throws IllegalStateException if no running sentinel names one of the two data nodes
   */
  public RedisTestServer master() {
    List<String> failures = new ArrayList<>();
    for (RedisTestServer sentinel : sentinels) {
      if (!sentinel.isRunning()) {
        continue;
      }
      try {
        OptionalLong port = masterPortKnownBy(sentinel);
        if (port.isPresent()) {
          RedisTestServer node = dataNodeAt(port.getAsLong());
          if (node != null) {
            return node;
          }
          failures.add(sentinel.hostAndPort() + " names unknown port " + port.getAsLong());
        } else {
          failures.add(sentinel.hostAndPort() + " does not know the master");
        }
      } catch (RuntimeException e) {
        failures.add(sentinel.hostAndPort() + ": " + e.getMessage());
      }
    }
    throw new IllegalStateException(
        "no running sentinel names the master " + masterName + ": " + failures);
  }

  /**
   * Returns the data node that is not the {@linkplain #master() current master}.
   *
   * @return the current replica (it may be stopped or still resynchronising)
   * @throws IllegalStateException if no running sentinel names the master
   */
  public RedisTestServer replica() {
    return other(master());
  }

  /**
   * Asks a sentinel for a failover ({@code SENTINEL FAILOVER}) and waits until the replica has
   * become master: every running sentinel names it and it reports {@code role:master}. If the old
   * master runs, this method then waits until it replicates from the new master with its link up.
   * Bounded by the timeout of the builder (30 s by default).
   *
   * <p>Sentinel itself reconfigures a demoted master only after it has reported the wrong role for
   * four publish periods and the next INFO poll, so this method does the same right away: it sends
   * the old master {@code REPLICAOF} (and {@code CONFIG REWRITE}, as Sentinel does) once the
   * sentinels have switched.
   *
   * @return the new master, which was the replica
   * @throws IllegalStateException if the failover does not complete in time
   */
  public RedisTestServer failover() {
    RedisTestServer oldMaster = master();
    RedisTestServer newMaster = other(oldMaster);
    String newMasterPort = Integer.toString(newMaster.port());
    long deadline = System.nanoTime() + timeout.toNanos();
    Polling.await(
        timeout,
        "a sentinel to accept SENTINEL FAILOVER " + masterName,
        () -> {
          RedisTestServer sentinel = runningSentinel();
          try {
            return "OK".equals(sentinel.command("SENTINEL", "FAILOVER", masterName));
          } catch (RedisErrorReplyException e) {
            // Someone (the sentinels themselves, say) already started one: wait for it instead.
            if ("INPROG".equals(e.errorCode())) {
              return true;
            }
            // NOGOODSLAVE until the sentinel has fresh INFO from the replica: retried.
            throw e;
          }
        });
    awaitMaster(newMaster, remaining(deadline));
    if (oldMaster.isRunning()) {
      Polling.await(
          remaining(deadline),
          oldMaster + " to replicate from " + newMaster,
          () -> {
            Map<String, String> replication = oldMaster.info("replication");
            if ("master".equals(replication.get("role"))) {
              oldMaster.command("REPLICAOF", RedisTestServer.HOST, newMasterPort);
              oldMaster.command("CONFIG", "REWRITE");
              return false;
            }
            return newMasterPort.equals(replication.get("master_port"))
                && "up".equals(replication.get("master_link_status"));
          });
    }
    return newMaster;
  }

  /**
   * Waits until a failover to {@code node} has finished: every running sentinel names it as the
   * master and has no failover in progress, and it reports {@code role:master}. A sentinel names
   * the replica it promotes while its failover is still under way, and a failover can still be
   * aborted before the promoted replica reports its new role; so one sentinel naming it proves
   * nothing yet.
   *
   * @param node the data node expected to be master
   * @param timeout how long to wait at most
   * @throws IllegalStateException if the failover does not finish within {@code timeout}
   */
  public void awaitMaster(RedisTestServer node, Duration timeout) {
    Polling.await(
        timeout,
        node + " to become master of " + masterName,
        () -> {
          for (RedisTestServer sentinel : sentinels) {
            if (sentinel.isRunning()) {
              OptionalLong port = masterPortKnownBy(sentinel);
              if (port.isEmpty() || port.getAsLong() != node.port()) {
                return false;
              }
              Map<String, String> state =
                  Replies.fields(
                      sentinel.command("SENTINEL", "MASTER", masterName), "SENTINEL MASTER");
              String flags = state.getOrDefault("flags", "");
              if (flags.contains("failover_in_progress")) {
                return false;
              }
            }
          }
          return "master".equals(node.info("replication").get("role"));
        });
  }

  /**
   * Waits until every sentinel runs and names the same master, which reports {@code role:master},
   * the other data node replicates from it with its link up, and every sentinel sees that replica
   * and all other sentinels. Useful after restarting a process.
   *
   * <p>A master that crashed, was failed over and is restarted comes back as a master; the
   * sentinels turn it into a replica only after it has reported that role for four publish periods
   * and their next INFO poll: about 3 s with Redis 7 (see the class documentation), about 20 s with
   * Redis 6.2.
   *
   * @param timeout how long to wait at most
   * @throws IllegalStateException if the deployment is not healthy within {@code timeout}, or a
   *     process is not running
   */
  public void awaitHealthy(Duration timeout) {
    Polling.await(timeout, "the Sentinel deployment to be healthy", this::healthy);
  }

  /**
   * Stops every process (sentinels first, so that they do not fail over a master being stopped) and
   * deletes their directories. Idempotent.
   *
   * @throws IllegalStateException if a process survives SIGKILL
   */
  @Override
  public void close() {
    List<RedisTestServer> all = new ArrayList<>(sentinels);
    all.addAll(dataNodes);
    closeAll(all);
  }

  /**
   * Describes the deployment for messages.
   *
   * @return master name, data nodes and sentinels
   */
  @Override
  public String toString() {
    return "Redis Sentinel "
        + masterName
        + " data "
        + dataNodes.stream().map(RedisTestServer::hostAndPort).collect(Collectors.toList())
        + " sentinels "
        + sentinelHostAndPorts();
  }

  private boolean healthy() {
    @Nullable RedisTestServer agreed = null;
    for (RedisTestServer sentinel : sentinels) {
      OptionalLong port = masterPortKnownBy(sentinel);
      if (port.isEmpty()) {
        return false;
      }
      RedisTestServer named = dataNodeAt(port.getAsLong());
      if (named == null || (agreed != null && agreed != named)) {
        return false;
      }
      agreed = named;
    }
    if (agreed == null) {
      return false;
    }
    RedisTestServer master = agreed;
    RedisTestServer replica = other(master);
    if (!"master".equals(master.info("replication").get("role"))) {
      return false;
    }
    Map<String, String> replication = replica.info("replication");
    if (!"slave".equals(replication.get("role"))
        || !Integer.toString(master.port()).equals(replication.get("master_port"))
        || !"up".equals(replication.get("master_link_status"))) {
      return false;
    }
    for (RedisTestServer sentinel : sentinels) {
      Map<String, String> state =
          Replies.fields(sentinel.command("SENTINEL", "MASTER", masterName), "SENTINEL MASTER");
      if (!"master".equals(state.get("flags"))
          || !Integer.toString(sentinels.size() - 1).equals(state.get("num-other-sentinels"))
          || !sentinelSeesHealthyReplica(sentinel, replica)) {
        return false;
      }
    }
    return true;
  }

  private boolean sentinelSeesHealthyReplica(RedisTestServer sentinel, RedisTestServer replica) {
    Object reply = sentinel.command("SENTINEL", "REPLICAS", masterName);
    for (Object entry : Replies.list(reply, "SENTINEL REPLICAS")) {
      Map<String, String> fields = Replies.fields(entry, "SENTINEL REPLICAS entry");
      if (Integer.toString(replica.port()).equals(fields.get("port"))) {
        return "slave".equals(fields.get("flags")) && "ok".equals(fields.get("master-link-status"));
      }
    }
    return false;
  }

  private OptionalLong masterPortKnownBy(RedisTestServer sentinel) {
    Object reply = sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName);
    if (reply == null) {
      return OptionalLong.empty();
    }
    List<?> address = Replies.list(reply, "SENTINEL GET-MASTER-ADDR-BY-NAME");
    return OptionalLong.of(Replies.integer(address.get(1), "master port"));
  }

  private @Nullable RedisTestServer dataNodeAt(long port) {
    for (RedisTestServer node : dataNodes) {
      if (node.port() == port) {
        return node;
      }
    }
    return null;
  }

  private RedisTestServer other(RedisTestServer dataNode) {
    return dataNodes.get(0) == dataNode ? dataNodes.get(1) : dataNodes.get(0);
  }

  private RedisTestServer runningSentinel() {
    return sentinels.stream()
        .filter(RedisTestServer::isRunning)
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no sentinel of " + this + " is running"));
  }

  private static Duration remaining(long deadline) {
    return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
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

  /** Options for a {@link RedisSentinelTestServer}. Not thread-safe. */
  public static final class Builder {
    private String masterName = DEFAULT_MASTER_NAME;
    private int sentinelCount = 3;
    private int quorum;
    private Duration downAfter = DEFAULT_DOWN_AFTER;
    private Duration failoverTimeout = DEFAULT_FAILOVER_TIMEOUT;
    private Duration timeout = DEFAULT_TIMEOUT;
    private @Nullable RedisBinary binary;
    private @Nullable String password;

    private Builder() {}

    /**
     * Sets the name under which the sentinels monitor the master; the default is {@value
     * RedisSentinelTestServer#DEFAULT_MASTER_NAME}.
     *
     * @param name letters, digits, {@code .}, {@code -} and {@code _}
     * @return this builder
     */
    public Builder masterName(String name) {
      if (!name.matches("[A-Za-z0-9._-]+")) {
        throw new IllegalArgumentException("not a usable master name: " + name);
      }
      this.masterName = name;
      return this;
    }

    /**
     * Sets the number of sentinels; the default is 3.
     *
     * @param count between 1 and 7
     * @return this builder
     */
    public Builder sentinels(int count) {
      if (count < 1 || count > 7) {
        throw new IllegalArgumentException("sentinels must be between 1 and 7: " + count);
      }
      this.sentinelCount = count;
      return this;
    }

    /**
     * Sets how many sentinels must agree that the master is down; the default is a majority of the
     * sentinels (2 of 3).
     *
     * @param quorum between 1 and the number of sentinels
     * @return this builder
     */
    public Builder quorum(int quorum) {
      if (quorum < 1) {
        throw new IllegalArgumentException("quorum must be positive: " + quorum);
      }
      this.quorum = quorum;
      return this;
    }

    /**
     * Sets {@code down-after-milliseconds}: how long the master may be unreachable before a
     * sentinel thinks it down. The default is 1 s.
     *
     * @param downAfter at least 100 ms
     * @return this builder
     */
    public Builder downAfter(Duration downAfter) {
      if (downAfter.toMillis() < 100) {
        throw new IllegalArgumentException("down-after must be at least 100 ms: " + downAfter);
      }
      this.downAfter = downAfter;
      return this;
    }

    /**
     * Sets the sentinels' {@code failover-timeout}; the default is 3 s.
     *
     * @param failoverTimeout at least 1 s
     * @return this builder
     */
    public Builder failoverTimeout(Duration failoverTimeout) {
      if (failoverTimeout.toMillis() < 1_000) {
        throw new IllegalArgumentException(
            "failover timeout must be at least 1 s: " + failoverTimeout);
      }
      this.failoverTimeout = failoverTimeout;
      return this;
    }

    /**
     * Sets how long {@link #start()} and {@link RedisSentinelTestServer#failover()} wait; the
     * default is 30 s.
     *
     * @param timeout a positive duration
     * @return this builder
     */
    public Builder timeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("timeout must be positive: " + timeout);
      }
      this.timeout = timeout;
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
     * Protects both data nodes' default user with a password; the replica and the sentinels
     * authenticate with it. The sentinels themselves need no password.
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
     * Starts the master, the replica and the sentinels, and waits until the deployment is healthy
     * (see {@link RedisSentinelTestServer#awaitHealthy(Duration)}).
     *
     * @return the running deployment
     * @throws IllegalStateException if no binary is found, a process does not start, or the
     *     deployment is not healthy within the timeout; processes already started are stopped
     */
    public RedisSentinelTestServer start() {
      int effectiveQuorum = quorum == 0 ? sentinelCount / 2 + 1 : quorum;
      if (effectiveQuorum > sentinelCount) {
        throw new IllegalArgumentException(
            "quorum " + effectiveQuorum + " exceeds the " + sentinelCount + " sentinels");
      }
      RedisBinary chosen = binary != null ? binary : RedisBinary.locate();
      long deadline = System.nanoTime() + timeout.toNanos();
      List<RedisTestServer> dataNodes = new ArrayList<>();
      List<RedisTestServer> sentinels = new ArrayList<>();
      try {
        RedisTestServer master = dataNode(chosen).start();
        dataNodes.add(master);
        dataNodes.add(
            dataNode(chosen)
                .config("replicaof", RedisTestServer.HOST, Integer.toString(master.port()))
                .start());
        for (int i = 0; i < sentinelCount; i++) {
          sentinels.add(sentinel(chosen, master.port(), effectiveQuorum).start());
        }
        RedisSentinelTestServer deployment =
            new RedisSentinelTestServer(masterName, dataNodes, sentinels, timeout);
        deployment.awaitHealthy(remaining(deadline));
        return deployment;
      } catch (RuntimeException e) {
        List<RedisTestServer> started = new ArrayList<>(sentinels);
        started.addAll(dataNodes);
        try {
          closeAll(started);
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
        throw e;
      }
    }

    private RedisTestServer.Builder dataNode(RedisBinary chosen) {
      RedisTestServer.Builder node = RedisTestServer.builder().binary(chosen);
      if (password != null) {
        node.password(password);
      }
      return node;
    }

    private RedisTestServer.Builder sentinel(RedisBinary chosen, int masterPort, int quorum) {
      RedisTestServer.Builder sentinel =
          RedisTestServer.builder()
              .binary(chosen)
              .sentinel()
              .config(
                  "sentinel",
                  "monitor",
                  masterName,
                  RedisTestServer.HOST,
                  Integer.toString(masterPort),
                  Integer.toString(quorum))
              .config(
                  "sentinel",
                  "down-after-milliseconds",
                  masterName,
                  Long.toString(downAfter.toMillis()))
              .config(
                  "sentinel",
                  "failover-timeout",
                  masterName,
                  Long.toString(failoverTimeout.toMillis()))
              .config("sentinel", "parallel-syncs", masterName, "1");
      if (password != null) {
        sentinel.config("sentinel", "auth-pass", masterName, password);
      }
      if (chosen.isAtLeast(7, 0)) {
        // Sentinel's own periods make a test wait up to ~20 s for what it learns by polling;
        // Redis 7 lets tests shorten them. TILT (after a stall of the sentinel's timer, as on a
        // loaded machine) then lasts 5 s instead of 30 s.
        sentinel.onEveryStart(
            "SENTINEL",
            "DEBUG",
            "info-period",
            "1000",
            "publish-period",
            "500",
            "tilt-period",
            "5000");
      }
      return sentinel;
    }
  }
}
