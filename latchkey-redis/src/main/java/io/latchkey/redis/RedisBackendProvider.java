package io.latchkey.redis;

import io.latchkey.spi.BackendContext;
import io.latchkey.spi.BackendProvider;
import io.latchkey.spi.LatchkeyBackend;
import java.net.URI;
import java.util.Set;

/**
 * Opens {@link RedisBackend}s for {@link io.latchkey.Latchkey#connect(String)}:
 *
 * <pre>
 * redis://[[user]:password@]host[:port][/database][?option=value&amp;...]
 * rediss://...                                           TLS
 * redis-sentinel://[[user]:password@]host[:port][,host[:port]...][/database][?...]#masterName
 * rediss-sentinel://...                                  TLS
 * </pre>
 *
 * For example {@code redis://localhost:6379}, {@code rediss://app:s3cret@redis.example.com/2} or
 * {@code redis-sentinel://h1:26379,h2:26379?prefix=orders:#mymaster}. The port defaults to 6379
 * (26379 for sentinels), the database to 0. User and password are percent-encoded; a user info
 * without a colon is the password of the default user. The credentials are for the data nodes.
 *
 * <p>Options:
 *
 * <ul>
 *   <li>{@code prefix}: the prefix of every key latchkey writes, default {@code latchkey:}; clients
 *       with different prefixes do not see each other's locks. No braces.
 *   <li>{@code clientName}: the connection name shown by {@code CLIENT LIST}.
 *   <li>{@code verifyPeer}: {@code full} (default), {@code ca} or {@code none}; TLS only.
 * </ul>
 *
 * A malformed URI or an unknown option is refused with an {@link IllegalArgumentException} that
 * says what is wrong (and never shows the password).
 */
public final class RedisBackendProvider implements BackendProvider {
  private static final Set<String> SCHEMES =
      Set.of("redis", "rediss", "redis-sentinel", "rediss-sentinel");

  /** Called by {@link java.util.ServiceLoader}. */
  public RedisBackendProvider() {}

  @Override
  public boolean supportsScheme(String scheme) {
    return SCHEMES.contains(scheme);
  }

  @Override
  public LatchkeyBackend open(URI uri, BackendContext context) {
    return RedisBackend.open(uri, context);
  }
}
