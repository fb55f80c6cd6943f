package io.latchkey.internal;

import io.latchkey.spi.BackendFactory;
import io.latchkey.spi.BackendProvider;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.ServiceLoader;

/** Finds the backend for a URI among the {@link BackendProvider}s on the class path. */
public final class BackendRegistry {
  private BackendRegistry() {}

  /**
   * @param uri a backend URI
   * @return a factory that opens it
   * @throws IllegalArgumentException if the URI is malformed or no provider takes its scheme
   */
  public static BackendFactory factoryFor(String uri) {
    URI parsed;
    try {
      parsed = new URI(uri.trim());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(
          "malformed backend URI '" + uri + "': " + e.getMessage(), e);
    }
    String scheme = parsed.getScheme();
    if (scheme == null) {
      throw new IllegalArgumentException(
          "backend URI '" + uri + "' has no scheme; expected e.g. redis://host:6379 or memory:");
    }
    String lower = scheme.toLowerCase(Locale.ROOT);
    List<String> known = new ArrayList<>();
    for (BackendProvider provider : ServiceLoader.load(BackendProvider.class)) {
      if (provider.supportsScheme(lower)) {
        return context -> provider.open(parsed, context);
      }
      known.add(provider.getClass().getSimpleName());
    }
    throw new IllegalArgumentException(
        "no latchkey backend on the class path takes '"
            + lower
            + ":' URIs (found: "
            + (known.isEmpty() ? "none" : String.join(", ", known))
            + "); add the module for it, e.g. latchkey-redis for redis://");
  }
}
