package io.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.integration.support.locks.LockRegistry;

/** The locks endpoint, the health indicator and the Spring Integration lock registry. */
class ActuatorAndIntegrationTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  LatchkeyAutoConfiguration.class,
                  LatchkeyActuatorAutoConfiguration.class,
                  LatchkeyIntegrationAutoConfiguration.class))
          .withPropertyValues(
              "latchkey.url=memory:actuator",
              "latchkey.close-on-shutdown=false",
              "management.endpoints.web.exposure.include=health,locks");

  @Test
  void theEndpointListsInspectsAndForceReleasesLocks() {
    runner.run(
        context -> {
          Latchkey latchkey = context.getBean(Latchkey.class);
          LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
          Lease lease = latchkey.lock("orders/42").acquire(Duration.ofSeconds(1));
          assertThat(endpoint.locks().locks())
              .singleElement()
              .satisfies(
                  lock -> {
                    assertThat(lock.name()).isEqualTo("orders/42");
                    assertThat(lock.holders())
                        .singleElement()
                        .satisfies(
                            holder -> {
                              assertThat(holder.mode()).isEqualTo("EXCLUSIVE");
                              assertThat(holder.fencingToken()).isEqualTo(lease.fencingToken());
                            });
                  });
          assertThat(endpoint.lock(new String[] {"orders", "42"})).isNotNull();
          assertThat(endpoint.lock(new String[] {"orders", "43"})).isNull();
          assertThat(endpoint.forceRelease(new String[] {"orders", "42"}).released()).isTrue();
          assertThat(endpoint.delete(new String[] {"orders", "42"}).released()).isFalse();
          assertThat(endpoint.locks().locks()).isEmpty();
          org.assertj.core.api.Assertions.assertThatThrownBy(lease::release)
              .isInstanceOf(LeaseLostException.class);
        });
  }

  @Test
  void theHealthIndicatorIsUpWhenTheBackendAnswers() {
    runner.run(
        context -> {
          var health =
              java.util.Objects.requireNonNull(
                  context.getBean(LatchkeyHealthIndicator.class).health(true));
          assertThat(health.getStatus()).isEqualTo(Status.UP);
          assertThat(health.getDetails()).containsKey("backend");
        });
  }

  @Test
  void theLockRegistryHandsOutDistributedLocks() {
    runner.run(
        context -> {
          @SuppressWarnings("unchecked")
          LockRegistry<DistributedLock> registry = context.getBean(LockRegistry.class);
          DistributedLock lock = registry.obtain("k");
          assertThat(lock.name()).isEqualTo("integration/k");
          lock.lock();
          try {
            assertThat(CompletableFuture.supplyAsync(() -> registry.obtain("k").tryLock()).get())
                .isFalse();
          } finally {
            lock.unlock();
          }
          assertThat(registry.<String, RuntimeException>executeLocked("k", () -> "done"))
              .isEqualTo("done");
        });
  }
}
