package io.latchkey.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedLock;
import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.OwnerToken;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Conformance: explicit owner tokens: re-entry and release from other threads and clients.
 *
 * <ul>
 *   <li>{@code tokenOwnerReentersAndReleasesFromOtherThreads}: a lock taken with a token on one
 *       thread is re-entered and released on others, and it is not the calling thread's lock.
 *   <li>{@code tokenTravelsToAnotherClient}: another client (another process) given the token as a
 *       string re-enters the caller's lock instead of waiting for it, with the same fencing token;
 *       without {@link Feature#REMOTE_OWNER_TOKENS} the backend may instead refuse at once with
 *       {@link io.latchkey.UnsupportedFeatureException}, leaving the caller's lock held.
 *   <li>{@code anotherClientReleasesWithTheToken}: another client given the token can release a
 *       hold it did not take itself.
 *   <li>{@code calleeLeavingDoesNotReleaseTheCallersHold}: a client that re-entered with the token
 *       and released its own hold does not take the caller's hold with it when it closes.
 *   <li>{@code aDifferentTokenCannotRelease}: unlock with another token, from this client or
 *       another, fails with IllegalMonitorStateException and the lock stays held.
 *   <li>{@code parseRejectsGarbage}: OwnerToken.parse refuses anything that is not a token with an
 *       IllegalArgumentException that says what a token looks like; a token survives the round trip
 *       through its string.
 * </ul>
 */
public abstract class OwnerTokenContract extends ContractSupport {

  @Test
  void tokenOwnerReentersAndReleasesFromOtherThreads() throws Exception {
    String name = uniqueName("token");
    DistributedLock owned = client().lock(name).withOwner(client().newOwnerToken());
    owned.lock();

    int holdsSeenByOtherThread =
        BackgroundCall.run(
            executor(1),
            () -> {
              assertThat(owned.tryLock()).isTrue();
              int holds = owned.holdCount();
              owned.unlock();
              return holds;
            });

    assertThat(holdsSeenByOtherThread).isEqualTo(2);
    assertThat(owned.holdCount()).isEqualTo(1);
    assertThat(owned.isHeldByCurrentOwner()).isTrue();
    assertThat(client().lock(name).isHeldByCurrentOwner())
        .as("the calling thread is not the token's owner")
        .isFalse();
    assertThat(client().lock(name).tryLock()).isFalse();
    assertThat(newClient().lock(name).tryLock()).isFalse();

    BackgroundCall.run(
        executor(1),
        () -> {
          owned.unlock();
          return null;
        });
    assertThat(owned.isLocked()).isFalse();
    assertThat(owned.holdCount()).isZero();
  }

  @Test
  void tokenTravelsToAnotherClient() throws InterruptedException {
    String name = uniqueName("token");
    OwnerToken token = client().newOwnerToken();
    DistributedLock caller = client().lock(name).withOwner(token);
    Lease outer = caller.acquire(Duration.ZERO);

    // The token crosses the process boundary as a string, like a trace id.
    DistributedLock callee = newClient().lock(name).withOwner(OwnerToken.parse(token.value()));
    Optional<Lease> reentered = reenterElsewhere(() -> callee.acquire(Duration.ZERO));

    if (reentered.isPresent()) {
      Lease inner = reentered.get();
      assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
      assertThat(callee.isHeldByCurrentOwner()).isTrue();
      inner.release();
    } else {
      assertThat(callee.isHeldByCurrentOwner()).isFalse();
    }
    assertThat(caller.isLocked()).isTrue();
    assertThat(outer.isValid()).isTrue();
    DistributedLock stranger = newClient().lock(name);
    assertThat(stranger.tryLock()).isFalse();
    outer.release();
    assertThat(stranger.tryLock()).isTrue();
    stranger.unlock();
  }

  @Test
  @RequiresFeature(Feature.REMOTE_OWNER_TOKENS)
  void anotherClientReleasesWithTheToken() {
    String name = uniqueName("token");
    OwnerToken token = client().newOwnerToken();
    client().lock(name).withOwner(token).lock();

    newClient().lock(name).withOwner(OwnerToken.parse(token.value())).unlock();

    DistributedLock stranger = newClient().lock(name);
    assertThat(stranger.isLocked()).isFalse();
    assertThat(stranger.tryLock()).isTrue();
    stranger.unlock();
  }

  @Test
  void calleeLeavingDoesNotReleaseTheCallersHold() throws InterruptedException {
    String name = uniqueName("token");
    OwnerToken token = client().newOwnerToken();
    Lease callers = client().lock(name).withOwner(token).acquire(Duration.ZERO);
    Latchkey callee = newClient();
    DistributedLock callees = callee.lock(name).withOwner(OwnerToken.parse(token.value()));
    reenterElsewhere(() -> callees.acquire(Duration.ZERO)).ifPresent(Lease::release);

    // The callee's process shuts down; the caller is still working under its own hold.
    callee.close();

    DistributedLock stranger = newClient().lock(name);
    assertThat(stranger.tryLock()).as("the caller still holds the lock").isFalse();
    assertThat(callers.isValid()).isTrue();
    callers.release();
    assertThat(stranger.tryLock()).isTrue();
    stranger.unlock();
  }

  @Test
  @RequiresFeature(Feature.REMOTE_OWNER_TOKENS)
  void aDifferentTokenCannotRelease() {
    String name = uniqueName("token");
    DistributedLock owned = client().lock(name).withOwner(client().newOwnerToken());
    owned.lock();
    Latchkey other = newClient();

    assertThatThrownBy(() -> client().lock(name).withOwner(client().newOwnerToken()).unlock())
        .isInstanceOf(IllegalMonitorStateException.class);
    assertThatThrownBy(() -> other.lock(name).withOwner(other.newOwnerToken()).unlock())
        .isInstanceOf(IllegalMonitorStateException.class);
    assertThatThrownBy(() -> other.lock(name).unlock())
        .isInstanceOf(IllegalMonitorStateException.class);

    assertThat(owned.isHeldByCurrentOwner()).isTrue();
    assertThat(other.lock(name).tryLock()).isFalse();
    owned.unlock();
    assertThat(owned.isLocked()).isFalse();
  }

  @Test
  // Passes null where the API forbids it on purpose: checks that the call refuses it.
  @SuppressWarnings("NullAway")
  void parseRejectsGarbage() {
    OwnerToken token = client().newOwnerToken();
    String value = token.value();
    List<String> garbage =
        List.of(
            "x",
            "",
            " ",
            "tok-",
            value.toUpperCase(java.util.Locale.ROOT),
            value + "0",
            value.substring(0, value.length() - 1),
            " " + value,
            client().clientId());

    for (String notAToken : garbage) {
      assertThatThrownBy(() -> OwnerToken.parse(notAToken))
          .as("parse(\"%s\")", notAToken)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("owner token");
    }
    assertThatThrownBy(() -> OwnerToken.parse(null)).isInstanceOf(NullPointerException.class);

    OwnerToken parsed = OwnerToken.parse(value);
    assertThat(parsed).isEqualTo(token).hasSameHashCodeAs(token);
    assertThat(parsed.toString()).doesNotContain(value);
    assertThat(client().newOwnerToken()).isNotEqualTo(token);
  }

  /**
   * Issue 8, item 5: a grant lost while another process of the same owner token took the lock again
   * does not come back: the first holder's watchdog does not renew the new grant (it hears of its
   * loss instead), and its release leaves the new grant alone.
   */
  @Test
  @RequiresFeature({Feature.REMOTE_OWNER_TOKENS, Feature.ADMIN})
  void aLostGrantOfASharedTokenDoesNotComeBack() throws InterruptedException {
    String name = uniqueName("token-lost");
    OwnerToken token = client().newOwnerToken();
    Lease first = client().lock(name).withOwner(token).acquire(Duration.ZERO);
    List<LeaseLostException> heard = new CopyOnWriteArrayList<>();
    first.onLost(heard::add);

    Latchkey elsewhere = newClient();
    elsewhere.admin().forceRelease(name);
    Lease second =
        elsewhere.lock(name).withOwner(OwnerToken.parse(token.value())).acquire(Duration.ZERO);
    assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());

    Awaiting.eventually().until(() -> !heard.isEmpty());
    assertThat(first.isValid()).isFalse();
    assertThatThrownBy(first::release).isInstanceOf(LeaseLostException.class);

    assertThat(second.isValid()).isTrue();
    assertThat(newClient().lock(name).tryLock()).as("the second grant still holds").isFalse();
    second.release();
    assertThat(newClient().lock(name).tryLock()).isTrue();
  }
}
