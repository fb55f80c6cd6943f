package io.latchkey.quorum;

import io.latchkey.spi.BackendContext;
import io.latchkey.spi.BackendProvider;
import io.latchkey.spi.LatchkeyBackend;
import java.net.URI;

/**
 * Opens {@code quorum:MEMBER,MEMBER,...[;option=value...]} URIs for {@link
 * io.latchkey.Latchkey#connect(String)}; see {@link Quorum} for the format.
 */
public final class QuorumBackendProvider implements BackendProvider {
  static final String SCHEME = "quorum";

  /** Called by {@link java.util.ServiceLoader}. */
  public QuorumBackendProvider() {}

  @Override
  public boolean supportsScheme(String scheme) {
    return SCHEME.equals(scheme);
  }

  @Override
  public LatchkeyBackend open(URI uri, BackendContext context) {
    return Quorum.fromUri(uri).build().open(context);
  }
}
