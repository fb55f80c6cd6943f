package io.latchkey.spring;

import io.latchkey.Latchkey;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * A {@link LatchkeyLockRegistry} for Spring Integration, when it is on the class path and the
 * application has no lock registry of its own. Its keys get the prefix {@code
 * latchkey.integration.prefix} (default {@code integration/}).
 */
@AutoConfiguration(after = LatchkeyAutoConfiguration.class)
@ConditionalOnClass(LockRegistry.class)
@ConditionalOnBean(Latchkey.class)
public class LatchkeyIntegrationAutoConfiguration {
  /** Creates the auto-configuration; Spring does. */
  public LatchkeyIntegrationAutoConfiguration() {}

  /**
   * @param latchkey the client
   * @param environment for the prefix
   * @return the registry
   */
  @Bean
  @ConditionalOnMissingBean(LockRegistry.class)
  public LatchkeyLockRegistry latchkeyLockRegistry(Latchkey latchkey, Environment environment) {
    return new LatchkeyLockRegistry(
        latchkey, environment.getProperty("latchkey.integration.prefix", "integration/"));
  }
}
