package io.latchkey.zookeeper;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A {@code zookeeper://} URI taken apart: {@code
 * zookeeper://[user:password@]host[:port][,host[:port]...][/namespace][?option=value&...]}.
 *
 * @param hosts the connect string, ports filled in
 * @param namespace the node under which latchkey keeps its records, without a leading slash
 * @param sessionTimeout the session timeout latchkey asks for (the ensemble may negotiate another)
 * @param connectionTimeout how long Curator waits for a connection, or null for the operation
 *     timeout
 * @param credentials {@code user:password} for digest authentication and creator-only ACLs, or null
 * @param layout where locks live and how their nodes are named
 */
record ZooKeeperSettings(
    String hosts,
    String namespace,
    Duration sessionTimeout,
    @Nullable Duration connectionTimeout,
    @Nullable String credentials,
    LockLayout layout) {
  static final String SCHEME = "zookeeper";
  static final int DEFAULT_PORT = 2181;
  static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(10);
  private static final Set<String> OPTIONS =
      Set.of("sessionTimeout", "connectionTimeout", "layout");

  /** Never shows the password. */
  @Override
  public String toString() {
    return description();
  }

  /**
   * @return the URI without credentials or options
   */
  String description() {
    return SCHEME + "://" + hosts + "/" + namespace + layoutOption();
  }

  /** A Curator layout sees other locks than the default one does, so it is part of the identity. */
  private String layoutOption() {
    return layout == LockLayout.LATCHKEY ? "" : "?layout=" + layout.option();
  }

  /**
   * @return the hosts in order and the namespace, the same however the URI spelled them
   */
  String identity() {
    List<String> sorted = new ArrayList<>(List.of(hosts.split(",", -1)));
    sorted.replaceAll(host -> host.toLowerCase(Locale.ROOT));
    sorted.sort(null);
    return SCHEME + "://" + String.join(",", sorted) + "/" + namespace + layoutOption();
  }

  /**
   * @param uri a {@code zookeeper://} URI
   * @return its settings
   * @throws IllegalArgumentException saying what is wrong, without the password
   */
  static ZooKeeperSettings parse(URI uri) {
    String authority = uri.getRawAuthority();
    String redacted = redacted(uri);
    if (!SCHEME.equalsIgnoreCase(uri.getScheme())) {
      throw invalid(redacted, "the scheme must be " + SCHEME);
    }
    if (authority == null || authority.isEmpty()) {
      throw invalid(redacted, "no host; write zookeeper://host:2181");
    }
    String credentials = null;
    int at = authority.lastIndexOf('@');
    if (at >= 0) {
      credentials = URLDecoder.decode(authority.substring(0, at), StandardCharsets.UTF_8);
      authority = authority.substring(at + 1);
      int colon = credentials.indexOf(':');
      if (colon <= 0 || colon == credentials.length() - 1) {
        throw invalid(redacted, "the user info must be user:password");
      }
    }
    List<String> hosts = new ArrayList<>();
    for (String host : authority.split(",", -1)) {
      hosts.add(hostAndPort(host, redacted));
    }
    String namespace = namespace(uri.getRawPath(), redacted);
    Duration sessionTimeout = DEFAULT_SESSION_TIMEOUT;
    Duration connectionTimeout = null;
    LockLayout layout = LockLayout.LATCHKEY;
    String query = uri.getRawQuery();
    if (query != null && !query.isEmpty()) {
      for (String pair : query.split("&", -1)) {
        int equals = pair.indexOf('=');
        String key = equals < 0 ? pair : pair.substring(0, equals);
        String value =
            equals < 0 ? "" : URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8);
        if (!OPTIONS.contains(key)) {
          throw invalid(redacted, "unknown option '" + key + "'; known options: " + OPTIONS);
        }
        if (key.equals("layout")) {
          try {
            layout = LockLayout.ofOption(value);
          } catch (IllegalArgumentException e) {
            throw invalid(redacted, String.valueOf(e.getMessage()));
          }
          continue;
        }
        Duration parsed = duration(key, value, redacted);
        if (key.equals("sessionTimeout")) {
          sessionTimeout = parsed;
        } else {
          connectionTimeout = parsed;
        }
      }
    }
    return new ZooKeeperSettings(
        String.join(",", hosts), namespace, sessionTimeout, connectionTimeout, credentials, layout);
  }

  private static String hostAndPort(String host, String redacted) {
    if (host.isEmpty()) {
      throw invalid(redacted, "an empty host in the host list");
    }
    int colon = host.lastIndexOf(':');
    if (colon < 0 || host.endsWith("]")) {
      return host + ":" + DEFAULT_PORT;
    }
    String port = host.substring(colon + 1);
    if (!port.matches("[0-9]{1,5}")
        || Integer.parseInt(port) == 0
        || Integer.parseInt(port) > 65535) {
      throw invalid(redacted, "the port of '" + host + "' must be a number from 1 to 65535");
    }
    if (colon == 0) {
      throw invalid(redacted, "the host of '" + host + "' is empty");
    }
    return host;
  }

  private static String namespace(@Nullable String rawPath, String redacted) {
    if (rawPath == null || rawPath.isEmpty() || rawPath.equals("/")) {
      return ZooKeeperBackend.DEFAULT_NAMESPACE;
    }
    String path = URLDecoder.decode(rawPath.substring(1), StandardCharsets.UTF_8);
    if (path.endsWith("/")) {
      path = path.substring(0, path.length() - 1);
    }
    for (String segment : path.split("/", -1)) {
      if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
        throw invalid(redacted, "the namespace path '" + rawPath + "' has an empty, . or .. part");
      }
    }
    return path;
  }

  /** Reads {@code 250ms}, {@code 2s}, {@code 1m} or a plain number of milliseconds. */
  private static Duration duration(String key, String text, String redacted) {
    String unit = text.replaceAll("^[0-9]+", "");
    String digits = text.substring(0, text.length() - unit.length());
    if (digits.isEmpty() || digits.length() > 9 || !Set.of("", "ms", "s", "m").contains(unit)) {
      throw invalid(
          redacted, "option " + key + " must be like 500ms, 10s or 1m, was '" + text + "'");
    }
    long amount = Long.parseLong(digits);
    Duration duration =
        switch (unit) {
          case "s" -> Duration.ofSeconds(amount);
          case "m" -> Duration.ofMinutes(amount);
          default -> Duration.ofMillis(amount);
        };
    if (duration.isZero()) {
      throw invalid(redacted, "option " + key + " must be above 0");
    }
    return duration;
  }

  private static String redacted(URI uri) {
    String authority = uri.getRawAuthority();
    if (authority == null) {
      return uri.toString();
    }
    int at = authority.lastIndexOf('@');
    String hosts = at < 0 ? authority : "***@" + authority.substring(at + 1);
    String path = uri.getRawPath() == null ? "" : uri.getRawPath();
    return uri.getScheme() + "://" + hosts + path;
  }

  private static IllegalArgumentException invalid(String redacted, String problem) {
    return new IllegalArgumentException("invalid ZooKeeper URI " + redacted + ": " + problem);
  }
}
