package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Contention.assertStillWaiting;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.OwnerToken;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Future;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Conformance: declared features match the backend, missing ones refuse cleanly.
 *
 * <ul>
 *   <li>{@link #declaredFeaturesMatchTheFixture}: {@link Latchkey#features()} is exactly what the
 *       fixture says the backend has.
 *   <li>{@link #everyMissingFeatureIsRefusedNamingIt}: for each feature the backend lacks, the
 *       primitive that needs it ({@code admin().list()} for {@link Feature#ADMIN}) throws {@link
 *       UnsupportedFeatureException} naming the feature, when it is asked for.
 *   <li>{@link #theEngineRefusesEveryFeatureItIsNotShown}: the same refusal for every feature,
 *       checked by hiding each feature of the real backend from a client.
 *   <li>{@link #waitersPollWhenWakeupsAreNotPushed}: without {@link Feature#WAKEUP_PUSH} (hidden
 *       from the client, or missing), a waiter still acquires after the holder releases.
 *   <li>{@link #descriptionIsPresentAndKeepsNoSecret}: the backend description is not blank and
 *       shows no password of the fixture's URI.
 * </ul>
 */
public abstract class FeatureContract extends ContractSupport {
  private static final Duration LONG_WAIT = Duration.ofSeconds(10);

  @Test
  public void declaredFeaturesMatchTheFixture() {
    assertThat(client().features())
        .as("features declared by %s", client().backendDescription())
        .containsExactlyInAnyOrderElementsOf(fixture().features());
  }

  @Test
  public void everyMissingFeatureIsRefusedNamingIt() {
    Set<Feature> missing = EnumSet.allOf(Feature.class);
    missing.removeAll(fixture().features());
    for (Feature feature : missing) {
      assertRefused(client(), feature);
    }
  }

  @Test
  public void theEngineRefusesEveryFeatureItIsNotShown() {
    for (Feature feature : Feature.values()) {
      try (Latchkey masked = clientWithout(EnumSet.of(feature))) {
        assertThat(masked.features()).doesNotContain(feature);
        assertRefused(masked, feature);
      }
    }
  }

  @Test
  @RequiresFeature(Feature.LEASE_TIME)
  public void waitersPollWhenWakeupsAreNotPushed() throws Exception {
    String name = uniqueName("feature-polling");
    try (Latchkey polling = clientWithout(EnumSet.of(Feature.WAKEUP_PUSH))) {
      Lease held = client().lock(name).tryAcquire().orElseThrow();
      Future<Lease> waiter =
          executor(1).submit(() -> polling.lock(name).acquire(LONG_WAIT, Duration.ofSeconds(30)));
      assertStillWaiting("a polling waiter", waiter);
      held.release();

      Lease taken = Contention.succeeded(waiter, LONG_WAIT);
      assertThat(taken.isValid()).isTrue();
      taken.release();
    }
  }

  @Test
  public void descriptionIsPresentAndKeepsNoSecret() {
    String description = client().backendDescription();
    assertThat(description).isNotBlank();
    Optional<String> secret = fixture().uri().flatMap(FeatureContract::secretOf);
    if (secret.isPresent()) {
      String raw = secret.get();
      String decoded = URLDecoder.decode(raw, StandardCharsets.UTF_8);
      assertThat(description).doesNotContain(raw).doesNotContain(decoded);
      assertThat(client().toString()).doesNotContain(raw).doesNotContain(decoded);
    }
  }

  /**
   * The password in a URI's user info: after the ':' if there is one, else the whole user info
   * (Redis URIs carry a bare password there).
   */
  private static Optional<String> secretOf(String uri) {
    String userInfo;
    try {
      userInfo = URI.create(uri).getRawUserInfo();
    } catch (IllegalArgumentException notAUri) {
      return Optional.empty();
    }
    if (userInfo == null) {
      return Optional.empty();
    }
    int colon = userInfo.indexOf(':');
    String secret = colon < 0 ? userInfo : userInfo.substring(colon + 1);
    return secret.isEmpty() ? Optional.empty() : Optional.of(secret);
  }

  private Latchkey clientWithout(Set<Feature> hidden) {
    return Latchkey.using(
        FeatureHidingBackend.hiding(fixture().backend(), hidden), testOptions().build());
  }

  private static void assertRefused(Latchkey latchkey, Feature feature) {
    ThrowingCallable ask = askFor(latchkey, feature);
    if (ask == null) {
      return;
    }
    assertThatThrownBy(ask)
        .as("asking for a primitive that needs %s", feature)
        .isInstanceOfSatisfying(
            UnsupportedFeatureException.class, e -> assertThat(e.feature()).isEqualTo(feature))
        .hasMessageContaining(feature.name());
  }

  /** The call that needs the feature, or null if none does (waiting falls back to polling). */
  private static @Nullable ThrowingCallable askFor(Latchkey latchkey, Feature feature) {
    String name = uniqueName("feature-" + feature.name().toLowerCase(java.util.Locale.ROOT));
    return switch (feature) {
      case FAIR_LOCK -> () -> latchkey.fairLock(name);
      case READ_WRITE_LOCK -> () -> latchkey.readWriteLock(name);
      case SEMAPHORE -> () -> latchkey.semaphore(name);
      case LEASED_SEMAPHORE -> () -> latchkey.leasedSemaphore(name);
      case COUNT_DOWN_LATCH -> () -> latchkey.countDownLatch(name);
      // The features of a primitive are asked for through it, when the backend has it.
      case DELETE_RECORDS ->
          has(latchkey, Feature.COUNT_DOWN_LATCH)
              ? () -> latchkey.countDownLatch(name).delete()
              : null;
      case DRAIN_AND_SET_PERMITS ->
          has(latchkey, Feature.SEMAPHORE) ? () -> latchkey.semaphore(name).drainPermits() : null;
      case PERMIT_BATCHES ->
          has(latchkey, Feature.LEASED_SEMAPHORE)
              ? () -> latchkey.leasedSemaphore(name).tryAcquire(2)
              : null;
      case PERMIT_LEASE_UPDATE ->
          has(latchkey, Feature.LEASED_SEMAPHORE)
              ? () ->
                  latchkey.leasedSemaphore(name).updateLeaseTime("permit", Duration.ofSeconds(5))
              : null;
      case SYNCHRONIZER_INSPECTION ->
          has(latchkey, Feature.ADMIN) ? () -> latchkey.admin().listLatches() : null;
      case LEASE_TIME -> () -> latchkey.lock(name).acquire(Duration.ZERO, Duration.ofSeconds(5));
      case PERMIT_LEASE_TIME ->
          has(latchkey, Feature.LEASED_SEMAPHORE)
              ? () -> latchkey.leasedSemaphore(name).tryAcquire(Duration.ofSeconds(5))
              : null;
      case REMOTE_OWNER_TOKENS -> () -> latchkey.lock(name).withOwner(OwnerToken.random()).unlock();
      case ADMIN -> () -> latchkey.admin().list();
      case PRESENCE -> () -> latchkey.admin().clients();
      case REVOCATION -> () -> latchkey.lock(name).requestRevocation();
      case CONNECTION_BOUND_HOLDS, WAKEUP_PUSH, WAKEUP_WATCH -> null;
    };
  }

  private static boolean has(Latchkey latchkey, Feature feature) {
    return latchkey.features().contains(feature);
  }
}
