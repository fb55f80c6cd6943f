package io.latchkey.memory;

import io.latchkey.spi.BackendContext;
import io.latchkey.spi.BackendProvider;
import io.latchkey.spi.LatchkeyBackend;
import java.net.URI;

/**
 * Opens {@code memory:} URIs: {@code memory:} (or {@code memory:default}) is the JVM's default
 * {@link MemoryLockServer}; {@code memory:NAME} a server of that name.
 */
public final class MemoryBackendProvider implements BackendProvider {
  /** Called by {@link java.util.ServiceLoader}. */
  public MemoryBackendProvider() {}

  @Override
  public boolean supportsScheme(String scheme) {
    return "memory".equals(scheme);
  }

  @Override
  public LatchkeyBackend open(URI uri, BackendContext context) {
    String part = uri.getSchemeSpecificPart();
    String name = part == null || part.isBlank() ? "default" : part;
    if (name.startsWith("//")) {
      name = name.substring(2);
    }
    if (name.isBlank() || name.contains("/")) {
      throw new IllegalArgumentException(
          "memory backend URI must be 'memory:' or 'memory:NAME', was '" + uri + "'");
    }
    return MemoryLockServer.named(name).backend().open(context);
  }
}
