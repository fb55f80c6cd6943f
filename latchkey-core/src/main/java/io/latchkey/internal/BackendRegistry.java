package io.latchkey.internal;

import io.latchkey.spi.BackendFactory;
import io.latchkey.spi.BackendProvider;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.ServiceLoader;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Finds the backend for a URI among the {@link BackendProvider}s on the class path. */
public final class BackendRegistry {
  private static final Pattern USER_INFO = Pattern.compile("^([^:/?#]*://)[^/?#]*@");
  private static final Pattern SCHEME_ONLY = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*):");

  private BackendRegistry() {}

  /**
   * A URI that is only a scheme ({@code memory:}) is passed to the provider as {@code
   * memory:default}.
   *
   * @param uri a backend URI
   * @return a factory that opens it
   * @throws IllegalArgumentException if the URI is malformed or no provider takes its scheme
   */
  public static BackendFactory factoryFor(String uri) {
    String trimmed = uri.trim();
    Matcher schemeOnly = SCHEME_ONLY.matcher(trimmed);
    if (schemeOnly.matches()) {
      trimmed = schemeOnly.group(1) + ":default";
    }
    URI parsed;
    try {
      parsed = new URI(trimmed);
    } catch (URISyntaxException e) {
      // Not e.getMessage(): it repeats the input, password included.
      throw new IllegalArgumentException(
          "malformed backend URI '"
              + redact(uri)
              + "': "
              + e.getReason()
              + (e.getIndex() >= 0 ? " at index " + e.getIndex() : ""));
    }
    String scheme = parsed.getScheme();
    if (scheme == null) {
      throw new IllegalArgumentException(
          "backend URI '"
              + redact(uri)
              + "' has no scheme; expected e.g. redis://host:6379 or memory:");
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

  /** Hides the user info (user and password) of a URI that is quoted in a message. */
  static String redact(String uri) {
    return USER_INFO.matcher(uri).replaceFirst("$1***@");
  }
}
