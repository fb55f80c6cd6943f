package io.latchkey.spi;

import java.net.URI;

/**
 * Makes backends from URIs; registered in {@code META-INF/services/io.latchkey.spi.BackendProvider}
 * so that {@link io.latchkey.Latchkey#connect(String)} finds it by scheme.
 */
public interface BackendProvider {
  /**
   * @param scheme a URI scheme in lower case, e.g. {@code redis}
   * @return true if this provider opens URIs of that scheme
   */
  boolean supportsScheme(String scheme);

  /**
   * @param uri the URI given to {@code connect}
   * @param context the client's identity and bounds
   * @return an open backend
   * @throws IllegalArgumentException if the URI is malformed for this backend, saying what is wrong
   */
  LatchkeyBackend open(URI uri, BackendContext context);
}
