package io.latchkey.quorum;

import io.latchkey.Feature;
import io.latchkey.LatchkeyOptions;
import io.latchkey.spi.BackendFactory;
import io.latchkey.testkit.BackendFixture;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/** The conformance kit's view of a quorum that a test class started. */
final class QuorumFixtures {
  /** What a quorum of members that offer everything declares. */
  static final Set<Feature> FEATURES =
      EnumSet.of(
          Feature.READ_WRITE_LOCK,
          Feature.LEASE_TIME,
          Feature.WAKEUP_PUSH,
          Feature.ADMIN,
          Feature.PRESENCE);

  /**
   * Client options of the fault tests: a short watchdog lease, so that losses and quarantines pass
   * quickly, and a short operation timeout, so that a call without a majority fails soon.
   */
  static final LatchkeyOptions SHORT_LEASES =
      LatchkeyOptions.builder()
          .leaseTime(Duration.ofSeconds(2))
          .renewInterval(Duration.ofMillis(400))
          .operationTimeout(Duration.ofSeconds(1))
          .build();

  /** Above the kit's longest lease (5 minutes). */
  static final Duration KIT_MAX_LEASE = Duration.ofMinutes(10);

  private QuorumFixtures() {}

  /**
   * @param name the quorum's name in reports
   * @param quorum builds the quorum, read when a client opens (the servers start before the tests)
   * @param uri the quorum's URI for worker JVMs, or null if its members live only in this JVM
   * @return a fixture declaring what a quorum offers
   */
  static BackendFixture of(
      String name, Supplier<BackendFactory> quorum, @Nullable Supplier<String> uri) {
    return of(name, quorum, uri, FEATURES);
  }

  /**
   * @param name the quorum's name in reports
   * @param quorum builds the quorum, read when a client opens (the servers start before the tests)
   * @param uri the quorum's URI for worker JVMs, or null if its members live only in this JVM
   * @param features what the quorum declares: {@link #FEATURES} less what a member lacks
   * @return a fixture declaring those features
   */
  static BackendFixture of(
      String name,
      Supplier<BackendFactory> quorum,
      @Nullable Supplier<String> uri,
      Set<Feature> features) {
    return new BackendFixture() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public BackendFactory backend() {
        return context -> quorum.get().open(context);
      }

      @Override
      public Set<Feature> features() {
        return features;
      }

      @Override
      public Optional<String> uri() {
        return uri == null ? Optional.empty() : Optional.of(uri.get());
      }
    };
  }
}
