package io.latchkey.quorum;

import io.latchkey.testkit.faults.FaultKind;
import io.latchkey.testkit.faults.ServerControl;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The fault suite's hold on a quorum of redis-servers: the suite's proxy stands in front of the
 * first member (the others are reached directly); a crash is a SIGKILL of one member, its restart
 * brings it back empty (so it sits out its quarantine), a pause is {@code CLIENT PAUSE} of one
 * member; each fault takes the next member in turn.
 */
final class QuorumServerControl implements ServerControl {
  private final RedisQuorum servers;
  private final String options;
  private int crashed;
  private int paused;

  /**
   * @param servers the members
   * @param options the quorum options of the workers' URI, e.g. {@code ;maxLease=2s}
   */
  QuorumServerControl(RedisQuorum servers, String options) {
    this.servers = servers;
    this.options = options;
  }

  @Override
  public String host() {
    return servers.member(0).host();
  }

  @Override
  public int port() {
    return servers.member(0).port();
  }

  @Override
  public String uriVia(String host, int port) {
    List<String> members = new ArrayList<>();
    members.add("redis://" + host + ":" + port);
    for (int i = 1; i < servers.size(); i++) {
      members.add(servers.member(i).uri());
    }
    return "quorum:" + String.join(",", members) + options;
  }

  @Override
  public Set<FaultKind> serverFaults() {
    return EnumSet.of(FaultKind.CRASH_SERVER, FaultKind.PAUSE_SERVER);
  }

  @Override
  public synchronized void crash() {
    servers.member(crashed).kill();
  }

  @Override
  public synchronized void restart() {
    servers.member(crashed).restart();
    crashed = (crashed + 1) % servers.size();
  }

  @Override
  public synchronized void pause(Duration duration) {
    servers.member(paused).command("CLIENT", "PAUSE", Long.toString(duration.toMillis()), "ALL");
    paused = (paused + 1) % servers.size();
  }
}
