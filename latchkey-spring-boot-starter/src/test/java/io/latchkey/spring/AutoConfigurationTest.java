package io.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.micrometer.LatchkeyMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The client bean from properties, on the in-memory backend: binding, validation, metrics. */
class AutoConfigurationTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class))
          .withPropertyValues("latchkey.close-on-shutdown=false");

  @Test
  void propertiesBecomeTheClientsOptions() {
    runner
        .withPropertyValues(
            "latchkey.url=memory:autoconfig",
            "latchkey.lease=2s",
            "latchkey.renew-interval=500ms",
            "latchkey.operation-timeout=1500ms",
            "latchkey.recheck-interval=250ms",
            "latchkey.queue-keep-alive=3s")
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(Latchkey.class);
              Latchkey latchkey = context.getBean(Latchkey.class);
              LatchkeyOptions options = latchkey.options();
              assertThat(options.leaseTime()).isEqualTo(Duration.ofSeconds(2));
              assertThat(options.renewInterval()).isEqualTo(Duration.ofMillis(500));
              assertThat(options.operationTimeout()).isEqualTo(Duration.ofMillis(1500));
              assertThat(options.recheckInterval()).isEqualTo(Duration.ofMillis(250));
              assertThat(options.queueKeepAlive()).isEqualTo(Duration.ofSeconds(3));
              assertThat(options.closeOnShutdown()).isFalse();
              assertThat(latchkey.backendDescription()).contains("memory");
            });
  }

  @Test
  void aRenewIntervalNotShorterThanTheLeaseFailsTheStartNamingBothProperties() {
    runner
        .withPropertyValues(
            "latchkey.url=memory:", "latchkey.lease=2s", "latchkey.renew-interval=5s")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining("latchkey.renew-interval (PT5S) must be shorter")
                    .hasStackTraceContaining("latchkey.lease (PT2S)"));
  }

  @Test
  void aDurationLatchkeyRefusesFailsTheStartNamingTheProperty() {
    runner
        .withPropertyValues("latchkey.url=memory:", "latchkey.operation-timeout=1ms")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining(
                        "latchkey.operation-timeout: operationTimeout must be"));
  }

  @Test
  void withoutAnyUrlTheStartFailsSayingWhatToSet() {
    runner.run(
        context ->
            assertThat(context)
                .getFailure()
                .hasStackTraceContaining("latchkey.url is not set")
                .hasStackTraceContaining("redis://localhost:6379"));
  }

  @Test
  void aKeyPrefixForABackendWithoutOneIsRefused() {
    runner
        .withPropertyValues("latchkey.url=memory:", "latchkey.key-prefix=app:")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining(
                        "latchkey.key-prefix is only understood by the Redis"));
  }

  @Test
  void anUnknownSchemeFailsTheStart() {
    runner
        .withPropertyValues("latchkey.url=nosuch://host")
        .run(context -> assertThat(context).getFailure().hasStackTraceContaining("nosuch"));
  }

  @Test
  void anApplicationsOwnClientIsKept() {
    runner
        .withUserConfiguration(OwnClient.class)
        .run(
            context -> {
              assertThat(context).hasSingleBean(Latchkey.class);
              assertThat(context.getBean(Latchkey.class).backendDescription()).contains("own");
            });
  }

  @Test
  void withAMeterRegistryTheClientRecordsMetrics() {
    runner
        .withUserConfiguration(Meters.class)
        .withPropertyValues("latchkey.url=memory:metrics")
        .run(
            context -> {
              Latchkey latchkey = context.getBean(Latchkey.class);
              assertThat(latchkey.options().observer()).isInstanceOf(LatchkeyMetrics.class);
              Lease lease = latchkey.lock("autoconfig/metrics").acquire(Duration.ofSeconds(1));
              MeterRegistry meters = context.getBean(MeterRegistry.class);
              assertThat(meters.get(LatchkeyMetrics.HELD).tag("primitive", "lock").gauge().value())
                  .isEqualTo(1);
              lease.release();
              assertThat(
                      meters.get(LatchkeyMetrics.GRANTS).tag("backend", "memory").counter().count())
                  .isEqualTo(1);
            });
  }

  @Test
  void metricsCanBeTurnedOff() {
    runner
        .withUserConfiguration(Meters.class)
        .withPropertyValues("latchkey.url=memory:", "latchkey.metrics.enabled=false")
        .run(
            context ->
                assertThat(context.getBean(Latchkey.class).options().observer())
                    .isSameAs(io.latchkey.LatchkeyObserver.NONE));
  }

  @Test
  void thePropertiesHaveMetadataForIdes() throws Exception {
    try (InputStream in =
        getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).isNotNull();
      String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      assertThat(json)
          .contains(
              "\"latchkey.url\"",
              "\"latchkey.lease\"",
              "\"latchkey.renew-interval\"",
              "\"latchkey.operation-timeout\"",
              "\"latchkey.key-prefix\"",
              "\"latchkey.recheck-interval\"",
              "\"latchkey.queue-keep-alive\"",
              "\"latchkey.close-on-shutdown\"",
              "\"latchkey.metrics.enabled\"",
              "\"latchkey.integration.prefix\"",
              "\"latchkey.reuse\"",
              "\"latchkey.jdbc.create-schema\"",
              "\"latchkey.jdbc.table-prefix\"",
              "\"latchkey.zookeeper.namespace\"")
          .contains("The backend URI");
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnClient {
    @Bean(destroyMethod = "close")
    Latchkey latchkey() {
      return Latchkey.connect(
          "memory:own", LatchkeyOptions.builder().closeOnShutdown(false).build());
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Meters {
    @Bean
    MeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }
  }
}
