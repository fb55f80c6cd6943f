package io.latchkey.spring;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Makes sure that beans get proxies for the infrastructure advisors of {@link Locked @Locked} and
 * {@link ScheduledLock @ScheduledLock} even where Spring Boot's AOP auto-configuration is off: it
 * registers Spring's infrastructure auto-proxy creator, which a stronger one (AspectJ's) replaces
 * if the application has it.
 */
class LockAdvisorsRegistrar implements ImportBeanDefinitionRegistrar {
  @Override
  public void registerBeanDefinitions(
      AnnotationMetadata importingClassMetadata, BeanDefinitionRegistry registry) {
    AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
  }
}
