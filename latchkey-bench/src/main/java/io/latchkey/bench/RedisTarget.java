package io.latchkey.bench;

import io.latchkey.servers.RedisTestServer;
import org.jspecify.annotations.Nullable;

/**
 * The Redis server a benchmark JVM talks to: the one named by the system property {@value
 * #URI_PROPERTY} (set by {@link RedisBenchmarks} for its JMH forks, so that a whole run uses the
 * one server it started), or else a {@link RedisTestServer} started here for this JVM alone. Never
 * the machine's own Redis: the property is only ever set to a server the benchmarks started.
 */
final class RedisTarget implements AutoCloseable {
  /** The system property that carries the URI of the server {@link RedisBenchmarks} started. */
  static final String URI_PROPERTY = "latchkey.bench.redis";

  private final String uri;
  private final @Nullable RedisTestServer owned;

  private RedisTarget(String uri, @Nullable RedisTestServer owned) {
    this.uri = uri;
    this.owned = owned;
  }

  /** Uses the server named by {@value #URI_PROPERTY}, else starts one. */
  static RedisTarget fromPropertyOrStart() {
    String given = System.getProperty(URI_PROPERTY);
    if (given != null && !given.isBlank()) {
      return new RedisTarget(given, null);
    }
    RedisTestServer server = RedisTestServer.start();
    return new RedisTarget(server.uri(), server);
  }

  /** Returns {@code redis://127.0.0.1:PORT}. */
  String uri() {
    return uri;
  }

  @Override
  public void close() {
    if (owned != null) {
      owned.close();
    }
  }
}
