package io.latchkey.redis;

import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What a Redis URI says: where to connect, how to authenticate, and the backend's options.
 *
 * <pre>
 * redis://[[user]:password@]host[:port][/database][?option=value&amp;...]
 * rediss://...                                         the same over TLS
 * redis-sentinel://[[user]:password@]host[:port][,host[:port]...][/database][?...]#masterName
 * rediss-sentinel://...                                the same over TLS
 * redis-cluster://[[user]:password@]host[:port][,host[:port]...][/][?...]
 * rediss-cluster://...                                 the same over TLS
 * </pre>
 *
 * The port defaults to 6379 (26379 for sentinels). A user info without a colon is a password for
 * the default user, as Lettuce and redis-cli read it. User and password are percent-decoded. The
 * credentials authenticate to the data nodes; sentinels are asked without them. The hosts of a
 * cluster URI are seeds: any reachable one tells the client the whole cluster.
 *
 * <p>Options: {@code prefix} (of every key, default {@code latchkey:}; no braces), {@code
 * clientName} (shown by CLIENT LIST), {@code verifyPeer} ({@code full}, {@code ca} or {@code none};
 * TLS only), {@code trustedCertificates} (TLS only; see below), {@code waitReplicas} (replicas that
 * must acknowledge each grant, default 0: do not wait) and {@code waitTimeout} (how long to wait
 * for them, e.g. {@code 100ms} or {@code 1s}; default 100 ms).
 *
 * <p>TLS: by default the server's certificate must chain to a CA of the JVM's default trust store
 * and, with {@code verifyPeer=full} (the default), name the host of the URI. {@code
 * trustedCertificates=/path/to/ca.pem} names a file of PEM certificates (percent-encoded like any
 * option value) that this backend trusts instead of the default trust store; nothing JVM-wide
 * changes. The file must exist, be readable and hold at least one certificate when the URI is
 * parsed; it is read again whenever a connection is made, so a renewed CA file takes effect on
 * reconnection. {@code verifyPeer=none} skips verification altogether: for tests only.
 *
 * @param topology how the Redis deployment is organised
 * @param redisUris Lettuce's form of the URI, with the credentials: one URI for a server or a
 *     Sentinel deployment, one per seed node for a cluster
 * @param keyPrefix the prefix of every key
 * @param replicaWait how many replicas must acknowledge a grant
 * @param sslOptions Lettuce's TLS options: the trusted certificates of {@code trustedCertificates},
 *     else Lettuce's defaults (the JVM's trust store)
 * @param description the URI without credentials, for messages
 */
record RedisConnectionSettings(
    Topology topology,
    List<RedisURI> redisUris,
    String keyPrefix,
    ReplicaWait replicaWait,
    SslOptions sslOptions,
    String description) {
  static final String DEFAULT_PREFIX = "latchkey:";

  /** How long to wait for replicas unless the URI says otherwise. */
  static final Duration DEFAULT_WAIT_TIMEOUT = Duration.ofMillis(100);

  /** The URI schemes of the Redis backend. */
  static final Set<String> SCHEMES =
      Set.of(
          "redis",
          "rediss",
          "redis-sentinel",
          "rediss-sentinel",
          "redis-cluster",
          "rediss-cluster");

  private static final Set<String> OPTIONS =
      Set.of(
          "prefix",
          "clientName",
          "verifyPeer",
          "trustedCertificates",
          "waitReplicas",
          "waitTimeout");
  private static final int REDIS_PORT = 6379;
  private static final int SENTINEL_PORT = 26379;
  private static final Duration LONGEST_WAIT_TIMEOUT = Duration.ofMinutes(1);
  private static final int MOST_REPLICAS = 9999;

  /** How the Redis deployment is organised. */
  enum Topology {
    /** One server (which may have replicas). */
    STANDALONE,
    /** A master found through sentinels. */
    SENTINEL,
    /** A Redis Cluster. */
    CLUSTER
  }

  /**
   * @return the URI of the server or the Sentinel deployment, or of the first seed of a cluster
   */
  RedisURI redisUri() {
    return redisUris.get(0);
  }

  /**
   * @param uri a Redis URI
   * @return its settings
   * @throws IllegalArgumentException saying what is wrong, without the password
   */
  static RedisConnectionSettings parse(URI uri) {
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    String rawAuthority = uri.getRawAuthority();
    String redacted = redact(uri);
    if (!SCHEMES.contains(scheme)) {
      throw invalid(redacted, "the scheme must be one of " + SCHEMES);
    }
    if (uri.isOpaque() || rawAuthority == null || rawAuthority.isEmpty()) {
      throw invalid(redacted, "it names no host; expected e.g. " + scheme + "://localhost:6379");
    }
    Topology topology =
        scheme.endsWith("-sentinel")
            ? Topology.SENTINEL
            : scheme.endsWith("-cluster") ? Topology.CLUSTER : Topology.STANDALONE;
    boolean sentinel = topology == Topology.SENTINEL;
    boolean tls = scheme.startsWith("rediss");

    int at = rawAuthority.lastIndexOf('@');
    String hostList = rawAuthority.substring(at + 1);
    List<HostAndPort> hosts = new ArrayList<>();
    for (String host : hostList.split(",", -1)) {
      hosts.add(HostAndPort.parse(host, sentinel ? SENTINEL_PORT : REDIS_PORT, redacted));
    }
    if (topology == Topology.STANDALONE && hosts.size() != 1) {
      throw invalid(
          redacted,
          "it names "
              + hosts.size()
              + " hosts; several are for redis-sentinel:// and redis-cluster:// only");
    }

    int database = database(uri.getRawPath(), redacted);
    if (topology == Topology.CLUSTER && database != 0) {
      throw invalid(redacted, "a cluster has only database 0");
    }
    String masterName = uri.getFragment();
    if (sentinel && (masterName == null || masterName.isBlank())) {
      throw invalid(
          redacted,
          "a sentinel URI names the master after '#', e.g."
              + " redis-sentinel://host:26379,host:26380#mymaster");
    }
    if (!sentinel && masterName != null) {
      throw invalid(redacted, "only sentinel URIs take a '#masterName'");
    }

    Map<String, String> options = options(uri.getRawQuery(), redacted);
    String prefix = options.getOrDefault("prefix", DEFAULT_PREFIX);
    String prefixProblem = prefixProblem(prefix);
    if (prefixProblem != null) {
      throw invalid(redacted, "option " + prefixProblem);
    }
    String verifyPeer = options.get("verifyPeer");
    if (verifyPeer != null && !tls) {
      throw invalid(
          redacted,
          "option verifyPeer needs TLS (rediss://, rediss-sentinel:// or rediss-cluster://)");
    }
    SslOptions sslOptions = sslOptions(options.get("trustedCertificates"), tls, redacted);
    String clientName = options.get("clientName");
    if (clientName != null
        && (clientName.isEmpty() || clientName.chars().anyMatch(c -> c <= ' '))) {
      throw invalid(redacted, "option clientName must be non-empty, without spaces");
    }
    ReplicaWait replicaWait = replicaWait(options, redacted);

    List<RedisURI> redisUris = new ArrayList<>();
    if (topology == Topology.CLUSTER) {
      for (HostAndPort seed : hosts) {
        redisUris.add(
            redisUri(
                RedisURI.Builder.redis(seed.host(), seed.port()),
                tls,
                0,
                options,
                rawAuthority,
                at,
                redacted));
      }
    } else {
      HostAndPort first = hosts.get(0);
      RedisURI.Builder builder =
          sentinel
              ? RedisURI.Builder.sentinel(first.host(), first.port(), masterName)
              : RedisURI.Builder.redis(first.host(), first.port());
      for (HostAndPort other : hosts.subList(1, hosts.size())) {
        builder.withSentinel(other.host(), other.port());
      }
      redisUris.add(redisUri(builder, tls, database, options, rawAuthority, at, redacted));
    }

    return new RedisConnectionSettings(
        topology,
        List.copyOf(redisUris),
        prefix,
        replicaWait,
        sslOptions,
        description(scheme, hostList, database, prefix, replicaWait, sentinel ? masterName : null));
  }

  /**
   * The settings of a backend over an application's Lettuce client ({@link RedisBackend#builder}).
   *
   * @param topology how the deployment is organised
   * @param redisUris copies of the application's URIs (the backend configures them)
   * @param keyPrefix a prefix that {@link #prefixProblem} accepts
   * @param replicaWait how many replicas must acknowledge a grant
   * @param sslOptions the TLS options of the application's client
   * @return the settings, described like the URI that would say the same
   */
  static RedisConnectionSettings of(
      Topology topology,
      List<RedisURI> redisUris,
      String keyPrefix,
      ReplicaWait replicaWait,
      SslOptions sslOptions) {
    RedisURI first = redisUris.get(0);
    String tls = first.isSsl() ? "rediss" : "redis";
    List<String> hosts = new ArrayList<>();
    String scheme;
    String master = null;
    if (topology == Topology.CLUSTER) {
      scheme = tls + "-cluster";
      redisUris.forEach(seed -> hosts.add(hostAndPort(seed.getHost(), seed.getPort())));
    } else if (!first.getSentinels().isEmpty()) {
      scheme = tls + "-sentinel";
      first.getSentinels().forEach(s -> hosts.add(hostAndPort(s.getHost(), s.getPort())));
      master = first.getSentinelMasterId();
    } else {
      scheme = tls;
      hosts.add(hostAndPort(first.getHost(), first.getPort()));
    }
    return new RedisConnectionSettings(
        topology,
        List.copyOf(redisUris),
        keyPrefix,
        replicaWait,
        sslOptions,
        description(
            scheme, String.join(",", hosts), first.getDatabase(), keyPrefix, replicaWait, master));
  }

  private static String hostAndPort(String host, int port) {
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }

  /** The URI without credentials: where, and the options that change what it reaches or waits. */
  private static String description(
      String scheme,
      String hostList,
      int database,
      String prefix,
      ReplicaWait replicaWait,
      @Nullable String masterName) {
    StringBuilder description = new StringBuilder(scheme).append("://").append(hostList);
    if (database != 0) {
      description.append('/').append(database);
    }
    List<String> shown = new ArrayList<>();
    if (!prefix.equals(DEFAULT_PREFIX)) {
      shown.add("prefix=" + prefix);
    }
    if (replicaWait.replicas() > 0) {
      shown.add("waitReplicas=" + replicaWait.replicas());
      shown.add("waitTimeout=" + replicaWait.timeout().toMillis() + "ms");
    }
    if (!shown.isEmpty()) {
      description.append('?').append(String.join("&", shown));
    }
    if (masterName != null) {
      description.append('#').append(masterName);
    }
    return description.toString();
  }

  /**
   * @return what is wrong with a key prefix, or null if it is fine
   */
  static @Nullable String prefixProblem(String prefix) {
    if (prefix.isEmpty() || prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
      return "prefix must be non-empty and without '{' or '}'";
    }
    return null;
  }

  /**
   * @return what is wrong with a replica wait, or null if it is fine
   */
  static @Nullable String replicaWaitProblem(int replicas, Duration timeout) {
    if (replicas < 0 || replicas > MOST_REPLICAS) {
      return "waitReplicas must be a number of replicas (0 to " + MOST_REPLICAS + ")";
    }
    if (timeout.isNegative() || timeout.isZero() || timeout.compareTo(LONGEST_WAIT_TIMEOUT) > 0) {
      return "waitTimeout must be above 0 and at most 1 minute";
    }
    return null;
  }

  /** Completes a builder with what every node's URI shares: TLS, database, options, credentials. */
  private static RedisURI redisUri(
      RedisURI.Builder builder,
      boolean tls,
      int database,
      Map<String, String> options,
      String rawAuthority,
      int at,
      String redacted) {
    builder.withSsl(tls).withDatabase(database);
    String verifyPeer = options.get("verifyPeer");
    if (verifyPeer != null) {
      builder.withVerifyPeer(verifyMode(verifyPeer, redacted));
    }
    String clientName = options.get("clientName");
    if (clientName != null) {
      builder.withClientName(clientName);
    }
    if (at >= 0) {
      authenticate(builder, rawAuthority.substring(0, at), redacted);
    }
    return builder.build();
  }

  /**
   * The TLS options for {@code trustedCertificates}: a readable file of at least one PEM
   * certificate, which then replaces the JVM's trust store for this backend.
   */
  private static SslOptions sslOptions(@Nullable String trusted, boolean tls, String redacted) {
    if (trusted == null) {
      return SslOptions.create();
    }
    if (!tls) {
      throw invalid(
          redacted,
          "option trustedCertificates needs TLS (rediss://, rediss-sentinel:// or"
              + " rediss-cluster://)");
    }
    Path file;
    try {
      file = Path.of(trusted).toAbsolutePath();
    } catch (InvalidPathException e) {
      throw invalid(redacted, "option trustedCertificates is not a file path: '" + trusted + "'");
    }
    if (!Files.isRegularFile(file)) {
      throw invalid(
          redacted,
          "option trustedCertificates names no file: '"
              + file
              + "' does not exist or is not a file");
    }
    if (!Files.isReadable(file)) {
      throw invalid(redacted, "option trustedCertificates: '" + file + "' cannot be read");
    }
    try (InputStream in = Files.newInputStream(file)) {
      if (CertificateFactory.getInstance("X.509").generateCertificates(in).isEmpty()) {
        throw new CertificateException("no certificate in it");
      }
    } catch (IOException | CertificateException e) {
      throw invalid(
          redacted,
          "option trustedCertificates: '"
              + file
              + "' does not hold PEM certificates ("
              + e.getMessage()
              + ")");
    }
    return SslOptions.builder().jdkSslProvider().trustManager(file.toFile()).build();
  }

  private static ReplicaWait replicaWait(Map<String, String> options, String redacted) {
    String replicas = options.get("waitReplicas");
    String timeout = options.get("waitTimeout");
    if (replicas == null) {
      if (timeout != null) {
        throw invalid(redacted, "option waitTimeout needs waitReplicas");
      }
      return ReplicaWait.NONE;
    }
    if (!replicas.matches("[0-9]{1,4}")) {
      throw invalid(
          redacted, "option waitReplicas must be a number of replicas, was '" + replicas + "'");
    }
    Duration wait = timeout == null ? DEFAULT_WAIT_TIMEOUT : duration(timeout, redacted);
    if (wait.isZero() || wait.compareTo(LONGEST_WAIT_TIMEOUT) > 0) {
      throw invalid(
          redacted,
          "option waitTimeout must be above 0 and at most 1 minute, was '" + timeout + "'");
    }
    return new ReplicaWait(Integer.parseInt(replicas), wait);
  }

  /** Reads {@code 250ms}, {@code 2s} or a plain number of milliseconds. */
  private static Duration duration(String text, String redacted) {
    String digits = text.endsWith("ms") ? text.substring(0, text.length() - 2) : text;
    boolean seconds = !text.endsWith("ms") && text.endsWith("s");
    if (seconds) {
      digits = text.substring(0, text.length() - 1);
    }
    if (!digits.matches("[0-9]{1,9}")) {
      throw invalid(redacted, "option waitTimeout must be like 100ms or 2s, was '" + text + "'");
    }
    long amount = Long.parseLong(digits);
    return seconds ? Duration.ofSeconds(amount) : Duration.ofMillis(amount);
  }

  private static void authenticate(RedisURI.Builder builder, String rawUserInfo, String redacted) {
    int colon = rawUserInfo.indexOf(':');
    String user = colon < 0 ? "" : decode(rawUserInfo.substring(0, colon));
    String password = decode(rawUserInfo.substring(colon + 1));
    if (password.isEmpty()) {
      throw invalid(redacted, "the user info has no password; write user:password@host");
    }
    if (user.isEmpty()) {
      builder.withPassword(password.toCharArray());
    } else {
      builder.withAuthentication(user, password);
    }
  }

  private static int database(@Nullable String rawPath, String redacted) {
    if (rawPath == null || rawPath.isEmpty() || rawPath.equals("/")) {
      return 0;
    }
    String number = rawPath.substring(1);
    if (!number.matches("[0-9]{1,9}")) {
      throw invalid(redacted, "the path must be a database number, e.g. /0, was '" + rawPath + "'");
    }
    return Integer.parseInt(number);
  }

  private static Map<String, String> options(@Nullable String rawQuery, String redacted) {
    Map<String, String> options = new LinkedHashMap<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return options;
    }
    for (String pair : rawQuery.split("&", -1)) {
      int equals = pair.indexOf('=');
      if (equals <= 0) {
        throw invalid(redacted, "option '" + pair + "' is not name=value");
      }
      String name = decode(pair.substring(0, equals));
      if (!OPTIONS.contains(name)) {
        throw invalid(redacted, "unknown option '" + name + "'; known: " + OPTIONS);
      }
      if (options.put(name, decode(pair.substring(equals + 1))) != null) {
        throw invalid(redacted, "option " + name + " is given twice");
      }
    }
    return options;
  }

  private static SslVerifyMode verifyMode(String value, String redacted) {
    return switch (value.toLowerCase(Locale.ROOT)) {
      case "full" -> SslVerifyMode.FULL;
      case "ca" -> SslVerifyMode.CA;
      case "none" -> SslVerifyMode.NONE;
      default ->
          throw invalid(
              redacted, "option verifyPeer must be full, ca or none, was '" + value + "'");
    };
  }

  /**
   * Percent-decodes a URI component as UTF-8 (java.net.URI has checked that every '%' starts an
   * escape); unlike URLDecoder, leaves '+' alone.
   */
  private static String decode(String raw) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c == '%') {
        bytes.write(Integer.parseInt(raw.substring(i + 1, i + 3), 16));
        i += 2;
      } else {
        byte[] encoded = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
        bytes.write(encoded, 0, encoded.length);
      }
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  /** The URI as given, with the user info replaced by {@code ***}. */
  private static String redact(URI uri) {
    String raw = uri.toString();
    String rawAuthority = uri.getRawAuthority();
    int at = rawAuthority == null ? -1 : rawAuthority.lastIndexOf('@');
    int start = raw.indexOf("//");
    if (at < 0 || start < 0) {
      return raw;
    }
    return raw.substring(0, start + 2) + "***" + raw.substring(start + 2 + at);
  }

  private static IllegalArgumentException invalid(String redacted, String problem) {
    return new IllegalArgumentException("invalid Redis URI '" + redacted + "': " + problem);
  }

  /** One {@code host[:port]} of the authority; IPv6 addresses go in brackets. */
  private record HostAndPort(String host, int port) {
    static HostAndPort parse(String text, int defaultPort, String redacted) {
      String host = text;
      String port = null;
      if (text.startsWith("[")) {
        int close = text.indexOf(']');
        if (close < 0) {
          throw invalid(redacted, "the IPv6 address '" + text + "' lacks its ']'");
        }
        host = text.substring(1, close);
        String rest = text.substring(close + 1);
        if (!rest.isEmpty()) {
          if (!rest.startsWith(":")) {
            throw invalid(
                redacted, "expected ':port' after '" + text.substring(0, close + 1) + "'");
          }
          port = rest.substring(1);
        }
      } else {
        int colon = text.lastIndexOf(':');
        if (colon >= 0) {
          host = text.substring(0, colon);
          port = text.substring(colon + 1);
        }
      }
      if (host.isEmpty()) {
        throw invalid(redacted, "a host name is empty");
      }
      if (port == null) {
        return new HostAndPort(host, defaultPort);
      }
      if (!port.matches("[0-9]{1,5}")
          || Integer.parseInt(port) < 1
          || Integer.parseInt(port) > 65_535) {
        throw invalid(
            redacted, "the port of '" + host + "' must be 1 to 65535, was '" + port + "'");
      }
      return new HostAndPort(host, Integer.parseInt(port));
    }
  }
}
