package io.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Latchkey;
import io.latchkey.Lease;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The client bean on a real Redis, from latchkey.url (sharing: {@link ReuseAutoConfigurationTest}).
 */
class RedisAutoConfigurationTest extends RedisBacked {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class))
          .withPropertyValues("latchkey.close-on-shutdown=false");

  @Test
  void theKeyPrefixIsTheRedisBackendsPrefix() {
    runner
        .withPropertyValues("latchkey.url=" + server().uri(), "latchkey.key-prefix=myapp:")
        .run(
            context -> {
              Latchkey latchkey = context.getBean(Latchkey.class);
              try (Lease lease = latchkey.lock("prefixed").acquire(Duration.ofSeconds(2))) {
                assertThat(lease.isValid()).isTrue();
                Object keys = server().command("KEYS", "myapp:*");
                assertThat(keys)
                    .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.LIST)
                    .isNotEmpty();
              }
              assertThat(server().command("KEYS", "latchkey:*prefixed*")).isEqualTo(List.of());
            });
  }
}
