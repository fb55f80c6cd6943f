package io.latchkey.zookeeper;

import io.latchkey.spi.BackendContext;
import io.latchkey.spi.BackendProvider;
import io.latchkey.spi.LatchkeyBackend;
import java.net.URI;

/**
 * Opens {@link ZooKeeperBackend}s for {@link io.latchkey.Latchkey#connect(String)}:
 *
 * <pre>
 * zookeeper://[user:password@]host[:port][,host[:port]...][/namespace][?option=value&amp;...]
 * </pre>
 *
 * For example {@code zookeeper://localhost:2181}, {@code
 * zookeeper://h1,h2,h3/orders?sessionTimeout=15s} or {@code
 * zookeeper://app:s3cret@zk.example.com:2181}. The port defaults to 2181. The path is the namespace
 * under which latchkey keeps its nodes (default {@code latchkey}); clients with different
 * namespaces do not see each other's locks. A user info {@code user:password} (percent-encoded)
 * authenticates by ZooKeeper's digest scheme, and every node latchkey creates then carries an ACL
 * that gives that user alone every right.
 *
 * <p>Options:
 *
 * <ul>
 *   <li>{@code sessionTimeout}: the session timeout to ask for, e.g. {@code 10s} (the default); the
 *       ensemble clamps it to its own bounds. It bounds how long a grant is trusted without news
 *       from the ensemble, and how long a crashed holder's node outlives it.
 *   <li>{@code connectionTimeout}: how long a call waits for a connection; by default three
 *       quarters of the client's operation timeout, so that a call held back while disconnected
 *       fails as a lost connection (which a waiting acquire waits through) before the operation
 *       timeout ends the whole call.
 *   <li>{@code layout}: {@code latchkey} (the default), {@code curator-mutex}, {@code
 *       curator-rwlock} or {@code curator-semaphore-mutex}: where locks live and how their nodes
 *       are named ({@link LockLayout}); the Curator layouts let latchkey's locks and Curator's
 *       {@code InterProcessMutex}, {@code InterProcessReadWriteLock} or {@code
 *       InterProcessSemaphoreMutex} on the same path exclude each other.
 * </ul>
 *
 * A malformed URI or an unknown option is refused with an {@link IllegalArgumentException} that
 * says what is wrong (and never shows the password).
 */
public final class ZooKeeperBackendProvider implements BackendProvider {
  /** Called by {@link java.util.ServiceLoader}. */
  public ZooKeeperBackendProvider() {}

  @Override
  public boolean supportsScheme(String scheme) {
    return ZooKeeperSettings.SCHEME.equals(scheme);
  }

  @Override
  public LatchkeyBackend open(URI uri, BackendContext context) {
    return ZooKeeperBackend.open(uri, context);
  }
}
