package io.latchkey.redis;

import io.latchkey.servers.RedisTestServer;
import io.latchkey.testkit.faults.FaultKind;
import io.latchkey.testkit.faults.ServerControl;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;

/**
 * The fault suite's hold on a {@link RedisTestServer}: a crash is SIGKILL (the data is lost, as
 * test servers persist nothing), a pause is {@code CLIENT PAUSE <ms> ALL}.
 */
final class RedisServerControl implements ServerControl {
  private final RedisTestServer redis;

  RedisServerControl(RedisTestServer redis) {
    this.redis = redis;
  }

  @Override
  public String host() {
    return redis.host();
  }

  @Override
  public int port() {
    return redis.port();
  }

  @Override
  public String uriVia(String host, int port) {
    return "redis://" + host + ":" + port;
  }

  @Override
  public Set<FaultKind> serverFaults() {
    return EnumSet.of(FaultKind.CRASH_SERVER, FaultKind.PAUSE_SERVER);
  }

  @Override
  public void crash() {
    redis.kill();
  }

  @Override
  public void restart() {
    redis.restart();
  }

  @Override
  public void pause(Duration duration) {
    redis.command("CLIENT", "PAUSE", Long.toString(duration.toMillis()), "ALL");
  }
}
