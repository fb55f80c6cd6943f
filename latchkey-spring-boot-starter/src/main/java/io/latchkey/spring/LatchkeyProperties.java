package io.latchkey.spring;

import io.latchkey.LatchkeyOptions;
import java.time.Duration;
import java.util.Locale;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code latchkey.*} properties. Unset options keep latchkey's defaults ({@link
 * LatchkeyOptions}); a value latchkey refuses fails the application's start with a message naming
 * the property.
 */
@ConfigurationProperties("latchkey")
public class LatchkeyProperties {
  /**
   * The backend URI, e.g. redis://localhost:6379, rediss://user:secret@host:6380 or memory:. When
   * set, it wins over latchkey.reuse; when unset, latchkey shares one of the application's own
   * clients (see latchkey.reuse).
   */
  private @Nullable String url;

  /**
   * Which of the application's own clients latchkey shares when latchkey.url is not set: auto (the
   * first there is of a Spring Data Redis LettuceConnectionFactory, a DataSource and a
   * CuratorFramework bean), redis, jdbc, zookeeper, or none (latchkey.url is then required).
   */
  private Reuse reuse = Reuse.AUTO;

  /** The lease of locks held without an explicit lease, kept alive by the watchdog. */
  private @Nullable Duration lease;

  /** How often the watchdog renews leases; by default a third of the lease. */
  private @Nullable Duration renewInterval;

  /** The longest one backend operation may take before it fails with a timeout. */
  private @Nullable Duration operationTimeout;

  /** The longest a waiter sleeps before it looks again, in case a wake-up was lost. */
  private @Nullable Duration recheckInterval;

  /** How long a lock waiter keeps its place in a wait queue without a sign of life. */
  private @Nullable Duration queueKeepAlive;

  /**
   * The prefix of every key latchkey writes (Redis backends only; latchkey's default: latchkey:).
   */
  private @Nullable String keyPrefix;

  /** Whether the client is closed (its locks released) by a JVM shutdown hook too. */
  private boolean closeOnShutdown = true;

  private final Metrics metrics = new Metrics();

  private final Jdbc jdbc = new Jdbc();

  private final Zookeeper zookeeper = new Zookeeper();

  /** The values of {@code latchkey.reuse}. */
  public enum Reuse {
    /** The first there is of a LettuceConnectionFactory, a DataSource and a CuratorFramework. */
    AUTO,
    /** The application's Spring Data Redis LettuceConnectionFactory (needs latchkey-redis). */
    REDIS,
    /** The application's DataSource (needs latchkey-jdbc). */
    JDBC,
    /** The application's CuratorFramework (needs latchkey-zookeeper). */
    ZOOKEEPER,
    /** None: latchkey.url must be set. */
    NONE
  }

  /**
   * The settings of the relational database backend when it shares the application's DataSource.
   */
  public static class Jdbc {
    /** Whether latchkey creates its tables when they are missing (else they must exist). */
    private boolean createSchema;

    /** The prefix of latchkey's table names (latchkey's default: latchkey_). */
    private @Nullable String tablePrefix;

    /**
     * @return whether missing tables are created
     */
    public boolean isCreateSchema() {
      return createSchema;
    }

    /**
     * @param createSchema whether missing tables are created
     */
    public void setCreateSchema(boolean createSchema) {
      this.createSchema = createSchema;
    }

    /**
     * @return the table prefix, if set
     */
    public @Nullable String getTablePrefix() {
      return tablePrefix;
    }

    /**
     * @param tablePrefix the table prefix
     */
    public void setTablePrefix(@Nullable String tablePrefix) {
      this.tablePrefix = tablePrefix;
    }
  }

  /** The settings of the ZooKeeper backend when it shares the application's CuratorFramework. */
  public static class Zookeeper {
    /**
     * The node under which latchkey keeps its records, relative to the Curator client's own
     * namespace (latchkey's default: latchkey).
     */
    private @Nullable String namespace;

    /**
     * @return the namespace, if set
     */
    public @Nullable String getNamespace() {
      return namespace;
    }

    /**
     * @param namespace the namespace
     */
    public void setNamespace(@Nullable String namespace) {
      this.namespace = namespace;
    }
  }

  /** The metrics settings. */
  public static class Metrics {
    /** Whether latchkey records Micrometer metrics when a MeterRegistry bean exists. */
    private boolean enabled = true;

    /**
     * @return whether metrics are recorded
     */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * @param enabled whether metrics are recorded
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }
  }

  /**
   * The client's options from these properties.
   *
   * @return the options
   * @throws IllegalArgumentException naming the property whose value latchkey refuses
   */
  public LatchkeyOptions toOptions() {
    LatchkeyOptions.Builder builder = LatchkeyOptions.builder().closeOnShutdown(closeOnShutdown);
    set("latchkey.lease", lease, builder::leaseTime);
    set("latchkey.renew-interval", renewInterval, builder::renewInterval);
    set("latchkey.operation-timeout", operationTimeout, builder::operationTimeout);
    set("latchkey.recheck-interval", recheckInterval, builder::recheckInterval);
    set("latchkey.queue-keep-alive", queueKeepAlive, builder::queueKeepAlive);
    try {
      return builder.build();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "latchkey.renew-interval ("
              + (renewInterval == null ? "a third of the lease" : renewInterval)
              + ") must be shorter than latchkey.lease ("
              + (lease == null ? "30s by default" : lease)
              + ")",
          e);
    }
  }

  /**
   * Hands a property's value, if set, to a builder, naming the property when the builder refuses
   * it.
   *
   * @throws IllegalArgumentException {@code property: what the builder said}
   */
  static <V> void set(String property, @Nullable V value, Consumer<V> setter) {
    if (value == null) {
      return;
    }
    try {
      setter.accept(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(property + ": " + e.getMessage(), e);
    }
  }

  /**
   * The backend URI with the key prefix added as the Redis backend's {@code prefix} option.
   *
   * @param baseUrl {@link #getUrl()}
   * @return the URI to connect to
   * @throws IllegalArgumentException if a key prefix is set for a backend without one
   */
  public String backendUri(String baseUrl) {
    String prefix = keyPrefix;
    if (prefix == null) {
      return baseUrl;
    }
    int colon = baseUrl.indexOf(':');
    String scheme = colon < 0 ? baseUrl : baseUrl.substring(0, colon).toLowerCase(Locale.ROOT);
    if (!scheme.startsWith("redis")) {
      throw new IllegalArgumentException(
          "latchkey.key-prefix is only understood by the Redis backends, not by " + scheme + ":");
    }
    if (prefix.isBlank()) {
      throw new IllegalArgumentException("latchkey.key-prefix must not be blank");
    }
    String separator = baseUrl.contains("?") ? "&" : "?";
    return baseUrl
        + separator
        + "prefix="
        + java.net.URLEncoder.encode(prefix, java.nio.charset.StandardCharsets.UTF_8);
  }

  /**
   * @return the backend URI, if set
   */
  public @Nullable String getUrl() {
    return url;
  }

  /**
   * @param url the backend URI
   */
  public void setUrl(@Nullable String url) {
    this.url = url;
  }

  /**
   * @return the watchdog lease, if set
   */
  public @Nullable Duration getLease() {
    return lease;
  }

  /**
   * @param lease the watchdog lease
   */
  public void setLease(@Nullable Duration lease) {
    this.lease = lease;
  }

  /**
   * @return the renew interval, if set
   */
  public @Nullable Duration getRenewInterval() {
    return renewInterval;
  }

  /**
   * @param renewInterval the renew interval
   */
  public void setRenewInterval(@Nullable Duration renewInterval) {
    this.renewInterval = renewInterval;
  }

  /**
   * @return the bound of one backend operation, if set
   */
  public @Nullable Duration getOperationTimeout() {
    return operationTimeout;
  }

  /**
   * @param operationTimeout the bound of one backend operation
   */
  public void setOperationTimeout(@Nullable Duration operationTimeout) {
    this.operationTimeout = operationTimeout;
  }

  /**
   * @return the re-check interval of waiters, if set
   */
  public @Nullable Duration getRecheckInterval() {
    return recheckInterval;
  }

  /**
   * @param recheckInterval the re-check interval of waiters
   */
  public void setRecheckInterval(@Nullable Duration recheckInterval) {
    this.recheckInterval = recheckInterval;
  }

  /**
   * @return the keep-alive of wait-queue places, if set
   */
  public @Nullable Duration getQueueKeepAlive() {
    return queueKeepAlive;
  }

  /**
   * @param queueKeepAlive the keep-alive of wait-queue places
   */
  public void setQueueKeepAlive(@Nullable Duration queueKeepAlive) {
    this.queueKeepAlive = queueKeepAlive;
  }

  /**
   * @return the key prefix, if set
   */
  public @Nullable String getKeyPrefix() {
    return keyPrefix;
  }

  /**
   * @param keyPrefix the key prefix
   */
  public void setKeyPrefix(@Nullable String keyPrefix) {
    this.keyPrefix = keyPrefix;
  }

  /**
   * @return whether a shutdown hook closes the client too
   */
  public boolean isCloseOnShutdown() {
    return closeOnShutdown;
  }

  /**
   * @param closeOnShutdown whether a shutdown hook closes the client too
   */
  public void setCloseOnShutdown(boolean closeOnShutdown) {
    this.closeOnShutdown = closeOnShutdown;
  }

  /**
   * @return the metrics settings
   */
  public Metrics getMetrics() {
    return metrics;
  }

  /**
   * @return which of the application's clients latchkey shares without latchkey.url
   */
  public Reuse getReuse() {
    return reuse;
  }

  /**
   * @param reuse which of the application's clients latchkey shares without latchkey.url
   */
  public void setReuse(Reuse reuse) {
    this.reuse = reuse;
  }

  /**
   * @return the settings of the JDBC backend over the application's DataSource
   */
  public Jdbc getJdbc() {
    return jdbc;
  }

  /**
   * @return the settings of the ZooKeeper backend over the application's CuratorFramework
   */
  public Zookeeper getZookeeper() {
    return zookeeper;
  }
}
