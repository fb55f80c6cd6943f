package io.latchkey.quorum;

import io.latchkey.servers.RedisTestServer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Five (or N) redis-server processes that a test started on free loopback ports, as the members of
 * a quorum.
 */
final class RedisQuorum implements AutoCloseable {
  private final List<RedisTestServer> servers;

  private RedisQuorum(List<RedisTestServer> servers) {
    this.servers = List.copyOf(servers);
  }

  static RedisQuorum start(int members) {
    List<RedisTestServer> started = new ArrayList<>();
    try {
      for (int i = 0; i < members; i++) {
        started.add(RedisTestServer.start());
      }
    } catch (RuntimeException e) {
      started.forEach(RedisTestServer::close);
      throw e;
    }
    return new RedisQuorum(started);
  }

  RedisTestServer member(int index) {
    return servers.get(index);
  }

  int size() {
    return servers.size();
  }

  /**
   * @param options quorum options, e.g. {@code ;maxLease=10m}, or empty
   * @return {@code quorum:redis://...,redis://...} with the options
   */
  String uri(String options) {
    return "quorum:"
        + servers.stream().map(RedisTestServer::uri).collect(Collectors.joining(","))
        + options;
  }

  @Override
  public void close() {
    servers.forEach(RedisTestServer::close);
  }
}
