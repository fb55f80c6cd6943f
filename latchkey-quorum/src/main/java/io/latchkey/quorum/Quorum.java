package io.latchkey.quorum;

import io.latchkey.spi.BackendFactory;
import io.latchkey.spi.BackendProvider;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Builds quorum backends: one lock over N independent member backends, held when a majority of the
 * members granted it within its validity (Redlock, generalised to members of any kind).
 *
 * <pre>{@code
 * BackendFactory quorum = Quorum.builder()
 *     .member("redis://a:6379").member("redis://b:6379").member("redis://c:6379")
 *     .maxLease(Duration.ofMinutes(1))
 *     .build();
 * try (Latchkey latchkey = Latchkey.using(quorum, LatchkeyOptions.defaults())) { ... }
 * }</pre>
 *
 * <p>The same as a URI, for {@link io.latchkey.Latchkey#connect(String)}: {@code
 * quorum:MEMBER,MEMBER,...[;option=value...]}, e.g. {@code
 * quorum:redis://a:6379,redis://b:6379,redis://c:6379;maxLease=30s}. Members are any latchkey URIs
 * (a comma followed by a scheme starts the next member, so a member's own commas, as in a Sentinel
 * URI, stay its own); options are those of the {@link Builder}: {@code maxLease}, {@code
 * driftFactor}, {@code driftFixed}, {@code memberTimeout}, {@code retryDelay}, durations as {@code
 * 500ms}, {@code 30s} or {@code 2m}.
 *
 * <p>What the quorum promises and how (docs/backends/quorum.md, docs/adr/0009-quorum-fencing.md):
 * mutual exclusion while a majority of the members work and keep their data; fencing tokens that
 * keep growing when members die, restart empty or are replaced; a member that restarted without its
 * data counts for nothing until the longest lease ({@link Builder#maxLease}) has passed. Every
 * member must keep a {@link io.latchkey.spi.FenceStore}.
 */
public final class Quorum {
  private static final Pattern MEMBER_START = Pattern.compile(",(?=[A-Za-z][A-Za-z0-9+.-]*:)");
  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m)");

  private Quorum() {}

  /**
   * @return a builder without members
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Collects the members and settings of a quorum. Not thread-safe. */
  public static final class Builder {
    private final List<BackendFactory> members = new ArrayList<>();
    private Duration maxLease = QuorumSettings.DEFAULT_MAX_LEASE;
    private double driftFactor = QuorumSettings.DEFAULT_DRIFT_FACTOR;
    private Duration driftFixed = QuorumSettings.DEFAULT_DRIFT_FIXED;
    private Duration memberTimeout = QuorumSettings.DERIVED;
    private Duration retryDelay = QuorumSettings.DEFAULT_RETRY_DELAY;

    private Builder() {}

    /**
     * Adds a member opened from a URI by the backend provider of its scheme.
     *
     * @param uri a latchkey backend URI, e.g. {@code redis://a:6379} or {@code memory:a}
     * @return this builder
     * @throws IllegalArgumentException if the URI is malformed, is itself a quorum, or no provider
     *     on the class path takes its scheme
     */
    public Builder member(String uri) {
      Objects.requireNonNull(uri, "uri must not be null");
      URI parsed = parseMember(uri);
      BackendProvider provider = providerFor(parsed);
      members.add(context -> provider.open(parsed, context));
      return this;
    }

    /**
     * Adds a member built in code (a {@link io.latchkey.memory.MemoryLockServer#backend()}, a
     * backend of another module).
     *
     * @param member opens the member for each quorum client
     * @return this builder
     */
    public Builder member(BackendFactory member) {
      members.add(Objects.requireNonNull(member, "member must not be null"));
      return this;
    }

    /**
     * The longest lease a grant may have (default 1 minute): longer leases, and a watchdog lease
     * above it, are refused; a member seen restarted without its data does not count towards a
     * majority for this long.
     *
     * @param maxLease positive
     * @return this builder
     */
    public Builder maxLease(Duration maxLease) {
      this.maxLease = Objects.requireNonNull(maxLease, "maxLease must not be null");
      return this;
    }

    /**
     * The clock-drift allowance subtracted from a grant's validity: {@code factor × lease + fixed}
     * (default 1% of the lease plus 2 ms, as Redlock's).
     *
     * @param factor at least 0, below 0.5
     * @param fixed not negative
     * @return this builder
     */
    public Builder clockDrift(double factor, Duration fixed) {
      this.driftFactor = factor;
      this.driftFixed = Objects.requireNonNull(fixed, "fixed must not be null");
      return this;
    }

    /**
     * How long one round of calls waits for the members (default and most: 40% of the client's
     * operation timeout for each of an acquire's two rounds, 80% for calls of one round, so that
     * every operation answers within that timeout).
     *
     * @param memberTimeout positive
     * @return this builder
     */
    public Builder memberTimeout(Duration memberTimeout) {
      Objects.requireNonNull(memberTimeout, "memberTimeout must not be null");
      if (memberTimeout.isZero() || memberTimeout.isNegative()) {
        throw new IllegalArgumentException("memberTimeout must be positive, was " + memberTimeout);
      }
      this.memberTimeout = memberTimeout;
      return this;
    }

    /**
     * The most a split vote waits before its next attempt (default 50 ms); the wait is random below
     * it.
     *
     * @param retryDelay positive
     * @return this builder
     */
    public Builder retryDelay(Duration retryDelay) {
      this.retryDelay = Objects.requireNonNull(retryDelay, "retryDelay must not be null");
      return this;
    }

    /**
     * @return opens a quorum backend for each client: every member opened with the client's context
     * @throws IllegalArgumentException if there are fewer than 2 members or a setting is out of
     *     range
     */
    public BackendFactory build() {
      if (members.size() < 2) {
        throw new IllegalArgumentException(
            "a quorum needs at least 2 members (3 or more to survive the loss of one), has "
                + members.size());
      }
      QuorumSettings settings =
          new QuorumSettings(maxLease, driftFactor, driftFixed, memberTimeout, retryDelay);
      List<BackendFactory> factories = List.copyOf(members);
      return context -> QuorumBackend.open(factories, settings, context);
    }

    /** Applies one option of a quorum URI. */
    void option(String key, String value) {
      switch (key) {
        case "maxLease" -> maxLease(duration(key, value));
        case "driftFactor" -> clockDrift(number(key, value), driftFixed);
        case "driftFixed" -> clockDrift(driftFactor, duration(key, value));
        case "memberTimeout" -> memberTimeout(duration(key, value));
        case "retryDelay" -> retryDelay(duration(key, value));
        default ->
            throw new IllegalArgumentException(
                "unknown quorum option '"
                    + key
                    + "'; known: maxLease, driftFactor, driftFixed, memberTimeout, retryDelay");
      }
    }
  }

  /**
   * Parses {@code quorum:MEMBER,MEMBER,...[;option=value...]}.
   *
   * @param uri a {@code quorum:} URI
   * @return its builder
   */
  static Builder fromUri(URI uri) {
    String spec = uri.getRawSchemeSpecificPart();
    if (spec == null || spec.isBlank()) {
      throw new IllegalArgumentException(
          "a quorum URI lists its members: quorum:redis://a:6379,redis://b:6379,redis://c:6379");
    }
    String[] parts = spec.split(";", -1);
    Builder builder = builder();
    for (int i = 1; i < parts.length; i++) {
      int equals = parts[i].indexOf('=');
      if (equals <= 0) {
        throw new IllegalArgumentException(
            "quorum option '" + parts[i] + "' is not of the form name=value");
      }
      builder.option(parts[i].substring(0, equals), parts[i].substring(equals + 1));
    }
    for (String member : MEMBER_START.split(parts[0], -1)) {
      builder.member(member);
    }
    return builder;
  }

  private static URI parseMember(String uri) {
    String trimmed = uri.trim();
    if (trimmed.matches("[A-Za-z][A-Za-z0-9+.-]*:")) {
      trimmed = trimmed + "default"; // "memory:" is memory:default, as for Latchkey.connect
    }
    URI parsed;
    try {
      parsed = new URI(trimmed);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(
          "malformed quorum member URI: " + e.getReason() + " at index " + e.getIndex());
    }
    if (parsed.getScheme() == null) {
      throw new IllegalArgumentException(
          "quorum member URI has no scheme; expected e.g. redis://host:6379 or memory:a");
    }
    return parsed;
  }

  private static BackendProvider providerFor(URI member) {
    String scheme = member.getScheme().toLowerCase(Locale.ROOT);
    if (QuorumBackendProvider.SCHEME.equals(scheme)) {
      throw new IllegalArgumentException("a quorum member cannot itself be a quorum");
    }
    for (BackendProvider provider :
        ServiceLoader.load(BackendProvider.class, Quorum.class.getClassLoader())) {
      if (provider.supportsScheme(scheme)) {
        return provider;
      }
    }
    throw new IllegalArgumentException(
        "no latchkey backend on the class path takes the quorum member scheme '"
            + scheme
            + ":'; add its module, e.g. latchkey-redis for redis://");
  }

  private static Duration duration(String key, String value) {
    Matcher matcher = DURATION.matcher(value);
    if (!matcher.matches()) {
      throw new IllegalArgumentException(
          "quorum option "
              + key
              + " must be a duration like 500ms, 30s or 2m, was '"
              + value
              + "'");
    }
    long amount = Long.parseLong(matcher.group(1));
    return switch (matcher.group(2)) {
      case "ms" -> Duration.ofMillis(amount);
      case "s" -> Duration.ofSeconds(amount);
      default -> Duration.ofMinutes(amount);
    };
  }

  private static double number(String key, String value) {
    try {
      return Double.parseDouble(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "quorum option " + key + " must be a number like 0.01, was '" + value + "'", e);
    }
  }
}
