package io.latchkey.redis;

import io.latchkey.spi.BackendContext;
import io.latchkey.spi.BackendProvider;
import io.latchkey.spi.LatchkeyBackend;
import java.net.URI;

/**
 * Opens {@link RedisBackend}s for {@link io.latchkey.Latchkey#connect(String)}:
 *
 * <pre>
 * redis://[[user]:password@]host[:port][/database][?option=value&amp;...]
 * rediss://...                                           TLS
 * redis-sentinel://[[user]:password@]host[:port][,host[:port]...][/database][?...]#masterName
 * rediss-sentinel://...                                  TLS
 * redis-cluster://[[user]:password@]host[:port][,host[:port]...][/][?...]
 * rediss-cluster://...                                   TLS
 * </pre>
 *
 * For example {@code redis://localhost:6379}, {@code rediss://app:s3cret@redis.example.com/2},
 * {@code redis-sentinel://h1:26379,h2:26379?prefix=orders:#mymaster} or {@code
 * redis-cluster://h1:7000,h2:7000,h3:7000}. The port defaults to 6379 (26379 for sentinels), the
 * database to 0 (a cluster has no other). User and password are percent-encoded; a user info
 * without a colon is the password of the default user. The credentials are for the data nodes. The
 * hosts of a cluster URI are seeds: one reachable seed is enough to find every node.
 *
 * <p>Options:
 *
 * <ul>
 *   <li>{@code prefix}: the prefix of every key latchkey writes, default {@code latchkey:}; clients
 *       with different prefixes do not see each other's locks. No braces.
 *   <li>{@code clientName}: the connection name shown by {@code CLIENT LIST}.
 *   <li>{@code verifyPeer}: {@code full} (default), {@code ca} or {@code none}; TLS only.
 *   <li>{@code waitReplicas}: after every grant, wait until this many replicas have acknowledged it
 *       ({@code WAIT}, on a connection of its own, so that waiting never holds up other commands);
 *       a grant that too few acknowledge is undone and fails with a {@link
 *       io.latchkey.BackendUnavailableException}. Default 0: do not wait. This narrows, but does
 *       not close, the window in which a fail-over loses a grant.
 *   <li>{@code waitTimeout}: how long to wait for the replicas, e.g. {@code 100ms} or {@code 1s};
 *       default 100 ms. It must be shorter than the operation timeout, which bounds a grant and its
 *       wait together ({@code open} refuses it otherwise); keep it well below.
 * </ul>
 *
 * A malformed URI or an unknown option is refused with an {@link IllegalArgumentException} that
 * says what is wrong (and never shows the password).
 */
public final class RedisBackendProvider implements BackendProvider {
  /** Called by {@link java.util.ServiceLoader}. */
  public RedisBackendProvider() {}

  @Override
  public boolean supportsScheme(String scheme) {
    return RedisConnectionSettings.SCHEMES.contains(scheme);
  }

  @Override
  public LatchkeyBackend open(URI uri, BackendContext context) {
    return RedisBackend.open(uri, context);
  }
}
