package io.latchkey.redis;

import io.latchkey.Feature;
import io.latchkey.spi.BackendFactory;
import io.latchkey.testkit.BackendFixture;
import java.net.URI;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/** The conformance kit's view of a Redis deployment that a test class started. */
final class RedisFixtures {
  private RedisFixtures() {}

  /**
   * @param name the deployment's name in reports
   * @param uri the deployment's URI, read when a client opens (the server starts before the tests)
   * @return a fixture declaring every feature, reachable from worker JVMs by its URI
   */
  static BackendFixture of(String name, Supplier<String> uri) {
    return new BackendFixture() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public BackendFactory backend() {
        return context -> RedisBackend.open(URI.create(uri.get()), context);
      }

      @Override
      public Set<Feature> features() {
        return EnumSet.complementOf(
            EnumSet.of(Feature.CONNECTION_BOUND_HOLDS, Feature.WAKEUP_WATCH));
      }

      @Override
      public Optional<String> uri() {
        return Optional.of(uri.get());
      }
    };
  }
}
