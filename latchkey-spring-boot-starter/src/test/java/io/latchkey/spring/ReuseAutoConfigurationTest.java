package io.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.jdbc.JdbcBackend;
import io.latchkey.redis.RedisBackend;
import io.latchkey.servers.RedisTestServer;
import io.latchkey.zookeeper.ZooKeeperBackend;
import java.time.Duration;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.TestingServer;
import org.h2.jdbcx.JdbcDataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Without {@code latchkey.url}, the client shares the application's own Redis connection factory,
 * DataSource or Curator client, as {@code latchkey.reuse} says; each on a real server (a {@code
 * redis-server}, H2 in memory, an in-process ZooKeeper).
 */
@ExtendWith(OutputCaptureExtension.class)
class ReuseAutoConfigurationTest extends RedisBacked {
  private static @Nullable TestingServer zooKeeper;

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class))
          .withPropertyValues("latchkey.close-on-shutdown=false");

  /** With Spring Boot's own Redis auto-configuration, pointed at the test's redis-server. */
  private ApplicationContextRunner withSpringDataRedis() {
    return runner
        .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
        .withPropertyValues(
            "spring.data.redis.host=127.0.0.1",
            "spring.data.redis.port=" + server().port(),
            "spring.data.redis.client-name=reusing-app");
  }

  @BeforeAll
  static void startZooKeeper() throws Exception {
    zooKeeper = new TestingServer(true);
  }

  @AfterAll
  static void stopZooKeeper() throws Exception {
    if (zooKeeper != null) {
      zooKeeper.close();
    }
  }

  @Test
  void theApplicationsRedisConnectionFactoryIsSharedAndOutlivesTheClient(CapturedOutput output) {
    withSpringDataRedis()
        .withPropertyValues("latchkey.key-prefix=reused:")
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LettuceConnectionFactory.class);
              Latchkey latchkey = context.getBean(Latchkey.class);
              assertThat(latchkey.backendDescription())
                  .isEqualTo("redis://127.0.0.1:" + server().port() + "?prefix=reused:");
              Lease lease = latchkey.lock("reuse/redis").acquire(Duration.ofSeconds(2));
              assertThat(lease.isValid()).isTrue();
              assertThat(server().command("EXISTS", "reused:lock:{reuse/redis}")).isEqualTo(1L);
              // latchkey's own connections carry the factory's settings (here its client name).
              assertThat(String.valueOf(server().command("CLIENT", "LIST")))
                  .contains("name=reusing-app");
              // Held when the context closes: closing the client releases it, through the
              // resources of the factory, which are closed after it.
            });
    assertThat(server().command("EXISTS", "reused:lock:{reuse/redis}")).isEqualTo(0L);
    assertThat(output)
        .contains(
            "sharing the application's LettuceConnectionFactory 'redisConnectionFactory':"
                + " redis://127.0.0.1:"
                + server().port())
        .contains("latchkey.reuse=auto");
  }

  @Test
  void theFactorysCredentialsAndDatabaseReachLatchkeysConnections() {
    try (RedisTestServer secured = RedisTestServer.builder().password("s3cret").start()) {
      runner
          .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
          .withPropertyValues(
              "spring.data.redis.host=127.0.0.1",
              "spring.data.redis.port=" + secured.port(),
              "spring.data.redis.password=s3cret",
              "spring.data.redis.database=3")
          .run(
              context -> {
                assertThat(context).hasNotFailed();
                Latchkey latchkey = context.getBean(Latchkey.class);
                assertThat(latchkey.backendDescription())
                    .isEqualTo("redis://127.0.0.1:" + secured.port() + "/3")
                    .doesNotContain("s3cret");
                try (Lease lease = latchkey.lock("reuse/secured").acquire(Duration.ofSeconds(2))) {
                  assertThat(lease.isValid()).isTrue();
                  // The lock's records are in database 3, where the factory connects.
                  assertThat(secured.info("keyspace")).containsKey("db3").doesNotContainKey("db0");
                }
              });
    }
  }

  @Test
  void latchkeyUrlWinsOverEveryBean() {
    withSpringDataRedis()
        .withUserConfiguration(H2.class, Curator.class)
        .withPropertyValues("latchkey.url=memory:url-wins")
        .run(
            context ->
                assertThat(context.getBean(Latchkey.class).backendDescription())
                    .contains("memory"));
  }

  @Test
  void theApplicationsDataSourceIsSharedWhenThereIsNoRedis(CapturedOutput output) {
    runner
        .withUserConfiguration(H2.class)
        .withPropertyValues("latchkey.jdbc.create-schema=true", "latchkey.jdbc.table-prefix=app_")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              Latchkey latchkey = context.getBean(Latchkey.class);
              assertThat(latchkey.backendDescription()).contains("h2:mem:reuse").contains("app_");
              latchkey.lock("reuse/jdbc").acquire(Duration.ofSeconds(2)).release();
              try (var connection = context.getBean(DataSource.class).getConnection();
                  var tables =
                      connection
                          .getMetaData()
                          .getTables(null, null, "APP_%", new String[] {"TABLE"})) {
                assertThat(tables.next())
                    .as("latchkey's tables in the application's database")
                    .isTrue();
              }
            });
    assertThat(output).contains("sharing the application's DataSource 'dataSource'");
  }

  @Test
  void theApplicationsCuratorClientIsSharedWhenItIsTheOnlyOne() {
    runner
        .withUserConfiguration(Curator.class)
        .withPropertyValues("latchkey.zookeeper.namespace=app/locks")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              Latchkey latchkey = context.getBean(Latchkey.class);
              assertThat(latchkey.backendDescription())
                  .startsWith("zookeeper://")
                  .endsWith("/app/locks");
              try (Lease lease = latchkey.lock("reuse/zookeeper").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.isValid()).isTrue();
              }
            });
  }

  @Test
  void autoTakesRedisThenTheDataSourceThenCuratorAndANamedKindWins() {
    runner
        .withUserConfiguration(H2.class, Curator.class)
        .withPropertyValues("latchkey.jdbc.create-schema=true")
        .run(
            context ->
                assertThat(context.getBean(Latchkey.class).backendDescription()).contains("h2"));
    runner
        .withUserConfiguration(H2.class, Curator.class)
        .withPropertyValues("latchkey.reuse=zookeeper")
        .run(
            context ->
                assertThat(context.getBean(Latchkey.class).backendDescription())
                    .startsWith("zookeeper://"));
    withSpringDataRedis()
        .withUserConfiguration(H2.class)
        .run(
            context ->
                assertThat(context.getBean(Latchkey.class).backendDescription())
                    .startsWith("redis://"));
  }

  @Test
  void withoutUrlAndWithoutAnyBeanTheStartFailsSayingWhatToSet() {
    runner.run(
        context ->
            assertThat(context)
                .getFailure()
                .hasStackTraceContaining(
                    "latchkey.url is not set, and the application has no client latchkey can share")
                .hasStackTraceContaining("a DataSource bean (with latchkey-jdbc)")
                .hasStackTraceContaining("latchkey.url=redis://localhost:6379"));
  }

  @Test
  void reuseNoneNeedsTheUrlEvenWithBeans() {
    runner
        .withUserConfiguration(H2.class)
        .withPropertyValues("latchkey.reuse=none")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining("latchkey.url is not set (and latchkey.reuse=none)"));
  }

  @Test
  void aNamedKindWithoutItsBeanFailsTheStart() {
    runner
        .withUserConfiguration(Curator.class)
        .withPropertyValues("latchkey.reuse=jdbc")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining(
                        "latchkey.reuse=jdbc, but the application has no single DataSource bean"));
  }

  @Test
  void badReuseSettingsFailTheStartNamingTheProperty() {
    runner
        .withPropertyValues("latchkey.reuse=sometimes")
        .run(context -> assertThat(context).getFailure().hasStackTraceContaining("latchkey.reuse"));
    runner
        .withUserConfiguration(H2.class)
        .withPropertyValues("latchkey.key-prefix=app:")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining(
                        "latchkey.key-prefix is only understood by the Redis backends, not by the"
                            + " JDBC backend"));
    runner
        .withUserConfiguration(H2.class)
        .withPropertyValues("latchkey.jdbc.table-prefix=1bad")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining("latchkey.jdbc.table-prefix: "));
    runner
        .withUserConfiguration(Curator.class)
        .withPropertyValues("latchkey.zookeeper.namespace=/absolute")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining("latchkey.zookeeper.namespace: namespace must be"));
    withSpringDataRedis()
        .withPropertyValues("latchkey.key-prefix=a{b}")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining("latchkey.key-prefix: prefix must be non-empty"));
  }

  @Test
  void withoutTheOptionalModulesTheirBeansAreIgnoredWithoutClassNotFound() {
    runner
        .withClassLoader(
            new FilteredClassLoader(
                LettuceConnectionFactory.class, RedisBackend.class, ZooKeeperBackend.class))
        .withUserConfiguration(H2.class, Curator.class)
        .withPropertyValues("latchkey.jdbc.create-schema=true")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBean(Latchkey.class).backendDescription()).contains("h2");
            });
    runner
        .withClassLoader(new FilteredClassLoader(JdbcBackend.class, ZooKeeperBackend.class))
        .withUserConfiguration(H2.class, Curator.class)
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining("a LettuceConnectionFactory bean")
                    .satisfies(
                        failure -> assertThat(failure.toString()).doesNotContain("ClassNotFound")));
    runner
        .withClassLoader(
            new FilteredClassLoader(RedisBackend.class, JdbcBackend.class, ZooKeeperBackend.class))
        .withUserConfiguration(H2.class)
        .withPropertyValues("latchkey.reuse=jdbc")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining("latchkey-jdbc is not on the class path"));
  }

  @Configuration(proxyBeanMethods = false)
  static class H2 {
    @Bean
    DataSource dataSource() {
      JdbcDataSource dataSource = new JdbcDataSource();
      dataSource.setURL("jdbc:h2:mem:reuse;DB_CLOSE_DELAY=-1");
      return dataSource;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Curator {
    @Bean(destroyMethod = "close")
    CuratorFramework curator() {
      if (zooKeeper == null) {
        throw new IllegalStateException("ZooKeeper did not start");
      }
      CuratorFramework curator =
          CuratorFrameworkFactory.newClient(
              zooKeeper.getConnectString(), 10_000, 5_000, new RetryNTimes(0, 0));
      curator.start();
      return curator;
    }
  }
}
