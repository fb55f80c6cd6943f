package io.latchkey.spring;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.micrometer.LatchkeyMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.Advisor;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;

/**
 * The {@link Latchkey} client of the application, from {@link LatchkeyProperties} (on {@code
 * latchkey.url}, or else sharing the application's own Redis connection factory, DataSource or
 * Curator client as {@code latchkey.reuse} says), with the {@link Locked @Locked} and {@link
 * ScheduledLock @ScheduledLock} advisors and, when Micrometer and latchkey-micrometer are there,
 * its metrics. An application that defines its own {@code Latchkey} bean keeps it (and gets the
 * rest).
 */
@AutoConfiguration
@EnableConfigurationProperties(LatchkeyProperties.class)
@Import(LockAdvisorsRegistrar.class)
public class LatchkeyAutoConfiguration {
  private static final Logger LOG = LoggerFactory.getLogger(LatchkeyAutoConfiguration.class);

  /** Creates the auto-configuration; Spring does. */
  public LatchkeyAutoConfiguration() {}

  /**
   * The client, closed with the application context (which releases what it holds): on {@code
   * latchkey.url} if set, else on the application's own client that {@code latchkey.reuse} chooses.
   *
   * @param properties the {@code latchkey.*} properties
   * @param reusable the kinds of application clients whose classes are on the class path
   * @param beans to close the client before the application's client it shares
   * @param observer the metrics, if any
   * @return the client
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public Latchkey latchkey(
      LatchkeyProperties properties,
      ObjectProvider<ReusableClient<?>> reusable,
      ConfigurableListableBeanFactory beans,
      ObjectProvider<LatchkeyObserverBean> observer) {
    LatchkeyOptions options = properties.toOptions();
    LatchkeyObserverBean metrics = observer.getIfAvailable();
    if (metrics != null) {
      options = options.toBuilder().observer(metrics.observer()).build();
    }
    String url = properties.getUrl();
    if (url != null && !url.isBlank()) {
      Latchkey latchkey = Latchkey.connect(properties.backendUri(url), options);
      LOG.info("latchkey: connected to {} (latchkey.url)", latchkey.backendDescription());
      return latchkey;
    }
    ReusableClient.Reused reused = chooseReused(properties, reusable.orderedStream().toList());
    Latchkey latchkey = Latchkey.using(reused.backend(), options);
    // The shared client must outlive ours, which releases its locks through it when it closes.
    beans.registerDependentBean(reused.beanName(), LATCHKEY_BEAN);
    LOG.info(
        "latchkey: latchkey.url is not set; sharing the application's {}: {} (latchkey.reuse={};"
            + " set latchkey.url, or latchkey.reuse=none, to choose otherwise)",
        reused.what(),
        latchkey.backendDescription(),
        properties.getReuse().name().toLowerCase(Locale.ROOT));
    return latchkey;
  }

  private static final String LATCHKEY_BEAN = "latchkey";

  /**
   * The application's client that {@code latchkey.reuse} chooses.
   *
   * @param available the kinds whose classes are on the class path, in the order {@code auto} tries
   *     them
   * @throws IllegalStateException saying what to set if there is none
   */
  static ReusableClient.Reused chooseReused(
      LatchkeyProperties properties, List<ReusableClient<?>> available) {
    LatchkeyProperties.Reuse reuse = properties.getReuse();
    String setUrl =
        "set latchkey.url to the lock service, e.g. latchkey.url=redis://localhost:6379, or"
            + " memory: for a single process";
    if (reuse == LatchkeyProperties.Reuse.NONE) {
      throw new IllegalStateException(
          "latchkey.url is not set (and latchkey.reuse=none): " + setUrl);
    }
    for (ReusableClient<?> candidate : available) {
      if (reuse == LatchkeyProperties.Reuse.AUTO || candidate.kind() == reuse) {
        ReusableClient.Reused found = candidate.find(properties);
        if (found != null) {
          return found;
        }
        if (reuse != LatchkeyProperties.Reuse.AUTO) {
          throw new IllegalStateException(
              "latchkey.url is not set and latchkey.reuse="
                  + reuse.name().toLowerCase(Locale.ROOT)
                  + ", but the application has no single "
                  + candidate.wanted().replaceFirst("^a ", "")
                  + " to share: define one, or "
                  + setUrl);
        }
      }
    }
    if (reuse != LatchkeyProperties.Reuse.AUTO) {
      throw new IllegalStateException(
          "latchkey.url is not set and latchkey.reuse="
              + reuse.name().toLowerCase(Locale.ROOT)
              + ", but latchkey-"
              + reuse.name().toLowerCase(Locale.ROOT)
              + (reuse == LatchkeyProperties.Reuse.REDIS
                  ? " or Spring Data Redis is not on the class path: "
                  : " is not on the class path: ")
              + "add it, or "
              + setUrl);
    }
    throw new IllegalStateException(
        "latchkey.url is not set, and the application has no client latchkey can share"
            + (available.isEmpty()
                ? " (no backend module whose client it could share is on the class path)"
                : " (it looked for "
                    + String.join(", ", available.stream().map(ReusableClient::wanted).toList())
                    + ")")
            + ": "
            + setUrl);
  }

  /** The application's Spring Data Redis connection factory, with latchkey-redis. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {
        "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory",
        "io.latchkey.redis.RedisBackend"
      })
  static class LettuceReuseConfiguration {
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static ReusableClient<?> latchkeyLettuceReuse(ConfigurableListableBeanFactory beans) {
      return new LettuceReuse(beans);
    }
  }

  /** The application's DataSource, with latchkey-jdbc. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "io.latchkey.jdbc.JdbcBackend")
  static class DataSourceReuseConfiguration {
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static ReusableClient<?> latchkeyDataSourceReuse(ConfigurableListableBeanFactory beans) {
      return new DataSourceReuse(beans);
    }
  }

  /** The application's CuratorFramework, with latchkey-zookeeper. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {
        "org.apache.curator.framework.CuratorFramework",
        "io.latchkey.zookeeper.ZooKeeperBackend"
      })
  static class CuratorReuseConfiguration {
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static ReusableClient<?> latchkeyCuratorReuse(ConfigurableListableBeanFactory beans) {
      return new CuratorReuse(beans);
    }
  }

  /**
   * The advisor of {@link Locked @Locked} methods; it finds the client when first called.
   *
   * @param latchkey the client
   * @param beans for {@code @bean} references in lock names
   * @return the advisor
   */
  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static Advisor latchkeyLockedAdvisor(ObjectProvider<Latchkey> latchkey, BeanFactory beans) {
    return new LockedAdvisor(latchkey, beans);
  }

  /**
   * The advisor of {@link ScheduledLock @ScheduledLock} jobs.
   *
   * @param latchkey the client
   * @return the advisor
   */
  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static Advisor latchkeyScheduledLockAdvisor(ObjectProvider<Latchkey> latchkey) {
    return new ScheduledLockAdvisor(latchkey);
  }

  /** The metrics, when Micrometer and latchkey-micrometer are on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass({MeterRegistry.class, LatchkeyMetrics.class})
  @ConditionalOnBooleanProperty(name = "latchkey.metrics.enabled", matchIfMissing = true)
  static class MetricsConfiguration {
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static LatchkeyObserverBean latchkeyMetrics(
        ObjectProvider<MeterRegistry> meters, ObjectProvider<ObservationRegistry> observations) {
      return () -> {
        MeterRegistry registry = meters.getIfAvailable();
        if (registry == null) {
          return io.latchkey.LatchkeyObserver.NONE;
        }
        return LatchkeyMetrics.builder(registry)
            .observations(observations.getIfAvailable(() -> ObservationRegistry.NOOP))
            .build();
      };
    }
  }

  /**
   * What observes the auto-configured client (a holder, so that the client's bean method does not
   * name Micrometer's types, which may be absent).
   */
  @FunctionalInterface
  public interface LatchkeyObserverBean {
    /**
     * @return the observer to set on the client's options
     */
    io.latchkey.LatchkeyObserver observer();
  }
}
