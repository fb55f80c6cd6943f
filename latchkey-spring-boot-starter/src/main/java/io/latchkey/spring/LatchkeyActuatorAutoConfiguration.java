package io.latchkey.spring;

import io.latchkey.Latchkey;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@link LocksEndpoint} and the {@link LatchkeyHealthIndicator}, with Spring Boot's actuator.
 */
@AutoConfiguration(after = LatchkeyAutoConfiguration.class)
@ConditionalOnBean(Latchkey.class)
public class LatchkeyActuatorAutoConfiguration {
  /** Creates the auto-configuration; Spring does. */
  public LatchkeyActuatorAutoConfiguration() {}

  /** The endpoint, when exposed. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(Endpoint.class)
  static class EndpointConfiguration {
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnAvailableEndpoint
    LocksEndpoint locksEndpoint(Latchkey latchkey) {
      return new LocksEndpoint(latchkey);
    }
  }

  /** The health indicator, named {@code latchkey}. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(HealthIndicator.class)
  static class HealthConfiguration {
    @Bean
    @ConditionalOnMissingBean(name = "latchkeyHealthIndicator")
    LatchkeyHealthIndicator latchkeyHealthIndicator(Latchkey latchkey) {
      return new LatchkeyHealthIndicator(latchkey);
    }
  }
}
