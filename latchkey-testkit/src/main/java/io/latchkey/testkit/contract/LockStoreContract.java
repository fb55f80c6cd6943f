package io.latchkey.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.latchkey.Feature;
import io.latchkey.HolderInfo;
import io.latchkey.LockMode;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.testkit.RequiresFeature;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * SPI conformance: the grant and release rules of {@link LockStore} ({@link
 * io.latchkey.spi.LockRequest}), called on the backend directly. Owners contend from separate
 * backends, as separate clients would.
 *
 * <ul>
 *   <li>{@link #exclusiveHolderRefusesAnotherOwner}: an exclusive holder refuses another owner's
 *       exclusive (and, with {@link Feature#READ_WRITE_LOCK}, shared) request; inspect shows the
 *       one holder with its client id and token.
 *   <li>{@link #reentryAddsAHoldAndKeepsTheToken}: the same owner again gets one more hold under
 *       the same token, from another connection too (without {@link Feature#REMOTE_OWNER_TOKENS}
 *       the other connection may refuse it with {@link UnsupportedFeatureException} instead).
 *   <li>{@link #sharedHoldersHoldTogether}: two owners' shared requests are both granted, each with
 *       its own token, and show as two shared holders.
 *   <li>{@link #sharedHolderRefusesAnotherOwnersExclusive}: a shared holder refuses another owner's
 *       exclusive request; an exclusive holder refuses another owner's shared request.
 *   <li>{@link #exclusiveHolderMayAlsoHoldShared}: an exclusive holder's shared request is granted
 *       under the same token.
 *   <li>{@link #upgradeIsRefused}: an owner holding only shared holds asking for exclusive gets
 *       UPGRADE_REFUSED, alone or beside other readers, and keeps its shared hold.
 *   <li>{@link #newHolderGetsALargerToken}: every new holder gets a token larger than every earlier
 *       grant of the name, whoever held it.
 *   <li>{@link #busyAnswerSaysWhenTheLeaseRunsOut}: a refusal's retryAfterMillis is positive (with
 *       {@link Feature#LEASE_TIME}) and no more than the holder's remaining lease as inspect shows
 *       it.
 *   <li>{@link #busyAnswerIsNeverZeroWhileTheHolderLives}: every refusal while a short lease runs
 *       out says -1 or a positive time, until the lock is granted.
 *   <li>{@link #reentryNeverShortensTheLease}: a re-entry with a shorter lease keeps the longer
 *       remaining lease; a re-entry with a longer lease extends it.
 *   <li>{@link #releaseNeedsTheGrantsToken}: a release naming another token is not held and leaves
 *       the holder alone; the right token releases it and frees the lock.
 *   <li>{@link #releaseWithAnyTokenReleasesTheOwnersGrant}: {@link GrantRef#ANY_TOKEN} releases
 *       whatever grant the owner has.
 *   <li>{@link #releaseCountsHoldsDown}: each release removes one hold and says how many are left;
 *       a release past the last hold is not held.
 *   <li>{@link #releaseOfWhatIsNotHeldIsNotHeld}: releasing the mode an owner does not hold, an
 *       owner that holds nothing, or a name never taken, is not held and changes nothing.
 * </ul>
 */
public abstract class LockStoreContract extends SpiContractSupport {

  @Test
  void exclusiveHolderRefusesAnotherOwner() {
    String name = uniqueName("spi-exclusive");
    LatchkeyBackend first = open();
    LatchkeyBackend second = open();
    String holder = owner("holder");
    String other = owner("other");

    AcquireResult grant = acquired(first, exclusive(name, holder));
    assertThat(grant.holds()).isEqualTo(1);

    refused(second, exclusive(name, other), LONG_LEASE);
    if (has(Feature.READ_WRITE_LOCK)) {
      refused(second, shared(name, other), LONG_LEASE);
    }
    if (has(Feature.ADMIN)) {
      assertThat(inspect(second, name).orElseThrow().holders())
          .singleElement()
          .satisfies(
              info -> {
                assertThat(info.owner()).isEqualTo(holder);
                assertThat(info.mode()).isEqualTo(LockMode.EXCLUSIVE);
                assertThat(info.holds()).isEqualTo(1);
                assertThat(info.fencingToken()).isEqualTo(grant.fencingToken());
              });
    }
  }

  @Test
  void reentryAddsAHoldAndKeepsTheToken() {
    String name = uniqueName("spi-reentry");
    LatchkeyBackend first = open();
    LatchkeyBackend second = open();
    String holder = owner("holder");

    AcquireResult outer = acquired(first, exclusive(name, holder));
    AcquireResult inner = acquired(first, exclusive(name, holder));
    assertThat(inner.holds()).isEqualTo(2);
    assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());

    Optional<AcquireResult> remote = reenteredElsewhere(second, exclusive(name, holder));
    int holds = 2;
    if (remote.isPresent()) {
      assertThat(granted(remote.get()).holds())
          .as("the owner re-enters from another connection")
          .isEqualTo(3);
      assertThat(remote.get().fencingToken()).isEqualTo(outer.fencingToken());
      holds = 3;
    }
    if (has(Feature.ADMIN)) {
      assertThat(holder(first, name, holder).holds()).isEqualTo(holds);
    }
  }

  /**
   * The SPI form of {@link #reenterElsewhere}: the answer of a re-entry on another connection of a
   * grant made on the first, or empty if a backend without {@link Feature#REMOTE_OWNER_TOKENS}
   * refused it with {@link UnsupportedFeatureException} naming that feature.
   */
  private Optional<AcquireResult> reenteredElsewhere(LatchkeyBackend other, LockRequest request) {
    CompletableFuture<AcquireResult> answer =
        other.locks().tryAcquire(request).toCompletableFuture();
    if (!has(Feature.REMOTE_OWNER_TOKENS)) {
      try {
        answer.get(Awaiting.PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException e) {
        if (e.getCause() instanceof UnsupportedFeatureException refused) {
          assertThat(refused.feature()).isEqualTo(Feature.REMOTE_OWNER_TOKENS);
          return Optional.empty();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted", e);
      } catch (TimeoutException e) {
        throw new AssertionError("the backend did not answer within " + Awaiting.PATIENCE, e);
      }
    }
    return Optional.of(join(answer));
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void sharedHoldersHoldTogether() {
    String name = uniqueName("spi-shared");
    LatchkeyBackend first = open();
    LatchkeyBackend second = open();
    String reader = owner("reader");
    String otherReader = owner("other-reader");

    AcquireResult one = acquired(first, shared(name, reader));
    AcquireResult two = acquired(second, shared(name, otherReader));

    assertThat(one.holds()).isEqualTo(1);
    assertThat(two.holds()).isEqualTo(1);
    assertThat(two.fencingToken()).isGreaterThan(one.fencingToken());
    if (has(Feature.ADMIN)) {
      assertThat(inspect(first, name).orElseThrow().holders())
          .extracting(HolderInfo::owner, HolderInfo::mode, HolderInfo::fencingToken)
          .containsExactlyInAnyOrder(
              tuple(reader, LockMode.SHARED, one.fencingToken()),
              tuple(otherReader, LockMode.SHARED, two.fencingToken()));
    }
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void sharedHolderRefusesAnotherOwnersExclusive() {
    String readName = uniqueName("spi-read-blocks");
    String writeName = uniqueName("spi-write-blocks");
    LatchkeyBackend first = open();
    LatchkeyBackend second = open();
    String holder = owner("holder");
    String other = owner("other");

    acquired(first, shared(readName, holder));
    refused(second, exclusive(readName, other), LONG_LEASE);

    acquired(first, exclusive(writeName, holder));
    refused(second, shared(writeName, other), LONG_LEASE);
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void exclusiveHolderMayAlsoHoldShared() {
    String name = uniqueName("spi-write-then-read");
    LatchkeyBackend backend = open();
    String holder = owner("holder");

    AcquireResult write = acquired(backend, exclusive(name, holder));
    AcquireResult read = acquired(backend, shared(name, holder));

    assertThat(read.holds()).as("shared holds").isEqualTo(1);
    assertThat(read.fencingToken()).isEqualTo(write.fencingToken());
    if (has(Feature.ADMIN)) {
      assertThat(holdings(backend, name, holder))
          .extracting(HolderInfo::mode, HolderInfo::holds)
          .containsExactlyInAnyOrder(tuple(LockMode.EXCLUSIVE, 1), tuple(LockMode.SHARED, 1));
    }
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void upgradeIsRefused() {
    String name = uniqueName("spi-upgrade");
    LatchkeyBackend first = open();
    LatchkeyBackend second = open();
    String reader = owner("reader");
    String otherReader = owner("other-reader");

    AcquireResult read = acquired(first, shared(name, reader));
    assertThat(join(first.locks().tryAcquire(exclusive(name, reader))).status())
        .as("alone")
        .isEqualTo(AcquireResult.Status.UPGRADE_REFUSED);
    acquired(second, shared(name, otherReader));
    assertThat(join(first.locks().tryAcquire(exclusive(name, reader))).status())
        .as("beside another reader")
        .isEqualTo(AcquireResult.Status.UPGRADE_REFUSED);

    if (has(Feature.ADMIN)) {
      HolderInfo kept = holder(first, name, reader);
      assertThat(kept.mode()).isEqualTo(LockMode.SHARED);
      assertThat(kept.holds()).isEqualTo(1);
      assertThat(kept.fencingToken()).isEqualTo(read.fencingToken());
    }
    assertThat(
            join(
                first
                    .locks()
                    .release(lockGrant(name, reader, read.fencingToken()), LockMode.SHARED)))
        .isEqualTo(ReleaseResult.released(0));
  }

  @Test
  void newHolderGetsALargerToken() {
    String name = uniqueName("spi-tokens");
    LatchkeyBackend first = open();
    LatchkeyBackend second = open();
    String one = owner("one");
    String two = owner("two");
    List<Long> tokens = new ArrayList<>();

    for (int round = 0; round < 3; round++) {
      for (var turn : List.of(new Turn(first, one), new Turn(second, two))) {
        AcquireResult grant =
            granted(join(turn.backend().locks().tryAcquire(exclusive(name, turn.owner()))));
        tokens.add(grant.fencingToken());
        assertThat(
                join(
                    turn.backend()
                        .locks()
                        .release(
                            lockGrant(name, turn.owner(), grant.fencingToken()),
                            LockMode.EXCLUSIVE)))
            .isEqualTo(ReleaseResult.released(0));
      }
    }

    assertThat(tokens).isSorted().doesNotHaveDuplicates();
  }

  private record Turn(LatchkeyBackend backend, String owner) {}

  @Test
  @RequiresFeature({Feature.ADMIN, Feature.LEASE_TIME})
  void busyAnswerSaysWhenTheLeaseRunsOut() {
    String name = uniqueName("spi-retry-after");
    LatchkeyBackend first = open();
    LatchkeyBackend second = open();
    long lease = 5_000;
    acquired(first, request(name, owner("holder"), LockMode.EXCLUSIVE, lease));
    Duration before = inspect(second, name).orElseThrow().holders().get(0).remainingLease();

    AcquireResult refusal = refused(second, exclusive(name, owner("other")), lease);

    assertThat(refusal.retryAfterMillis())
        .as("retryAfterMillis against a remaining lease of %s read before", before)
        .isLessThanOrEqualTo(before.toMillis() + CLOCK_MARGIN);
  }

  @Test
  @RequiresFeature(Feature.LEASE_TIME)
  void busyAnswerIsNeverZeroWhileTheHolderLives() {
    String name = uniqueName("spi-retry-after-expiry");
    LatchkeyBackend first = open();
    LatchkeyBackend second = open();
    String other = owner("other");
    acquired(first, request(name, owner("holder"), LockMode.EXCLUSIVE, BRIEF_LEASE));

    List<AcquireResult> refusals = new ArrayList<>();
    Awaiting.eventually()
        .until(
            () -> {
              AcquireResult answer = join(second.locks().tryAcquire(exclusive(name, other)));
              if (!answer.isGranted()) {
                refusals.add(answer);
              }
              return answer.isGranted();
            });

    assertThat(refusals).as("refused while the short lease lived").isNotEmpty();
    refusals.forEach(refusal -> busy(refusal, BRIEF_LEASE));
  }

  @Test
  @RequiresFeature({Feature.ADMIN, Feature.LEASE_TIME})
  void reentryNeverShortensTheLease() {
    String longFirst = uniqueName("spi-reentry-shorter");
    String shortFirst = uniqueName("spi-reentry-longer");
    LatchkeyBackend backend = open();
    String holder = owner("holder");
    Duration half = Duration.ofMillis(LONG_LEASE / 2);

    acquired(backend, exclusive(longFirst, holder));
    AcquireResult shorter =
        acquired(backend, request(longFirst, holder, LockMode.EXCLUSIVE, SHORT_LEASE));
    assertThat(shorter.holds()).isEqualTo(2);
    assertThat(holder(backend, longFirst, holder).remainingLease())
        .as("remaining lease after a re-entry with a shorter lease")
        .isGreaterThan(half);

    acquired(backend, request(shortFirst, holder, LockMode.EXCLUSIVE, SHORT_LEASE));
    acquired(backend, exclusive(shortFirst, holder));
    assertThat(holder(backend, shortFirst, holder).remainingLease())
        .as("remaining lease after a re-entry with a longer lease")
        .isGreaterThan(half);
  }

  @Test
  void releaseNeedsTheGrantsToken() {
    String name = uniqueName("spi-release-token");
    LatchkeyBackend first = open();
    LatchkeyBackend second = open();
    String holder = owner("holder");
    String other = owner("other");
    long token = acquired(first, exclusive(name, holder)).fencingToken();

    assertThat(release(first, name, holder, token + 1, LockMode.EXCLUSIVE))
        .as("a release naming another token")
        .isEqualTo(ReleaseResult.NOT_HELD);
    refused(second, exclusive(name, other), LONG_LEASE);
    if (has(Feature.ADMIN)) {
      HolderInfo kept = holder(second, name, holder);
      assertThat(kept.holds()).isEqualTo(1);
      assertThat(kept.fencingToken()).isEqualTo(token);
    }

    assertThat(release(first, name, holder, token, LockMode.EXCLUSIVE))
        .isEqualTo(ReleaseResult.released(0));
    if (has(Feature.ADMIN)) {
      assertThat(inspect(second, name)).as("after the release").isEmpty();
    }
    acquired(second, exclusive(name, other));
  }

  @Test
  void releaseWithAnyTokenReleasesTheOwnersGrant() {
    String name = uniqueName("spi-release-any");
    LatchkeyBackend first = open();
    LatchkeyBackend second = open();
    String holder = owner("holder");
    acquired(first, exclusive(name, holder));

    assertThat(release(second, name, holder, GrantRef.ANY_TOKEN, LockMode.EXCLUSIVE))
        .isEqualTo(ReleaseResult.released(0));
    acquired(second, exclusive(name, owner("other")));
  }

  @Test
  void releaseCountsHoldsDown() {
    String name = uniqueName("spi-release-holds");
    LatchkeyBackend backend = open();
    String holder = owner("holder");
    long token = 0;
    for (int i = 0; i < 3; i++) {
      token = acquired(backend, exclusive(name, holder)).fencingToken();
    }
    GrantRef grant = lockGrant(name, holder, token);
    LockStore locks = backend.locks();

    assertThat(join(locks.release(grant, LockMode.EXCLUSIVE))).isEqualTo(ReleaseResult.released(2));
    if (has(Feature.ADMIN)) {
      assertThat(holder(backend, name, holder).holds()).isEqualTo(2);
    }
    assertThat(join(locks.release(grant, LockMode.EXCLUSIVE))).isEqualTo(ReleaseResult.released(1));
    assertThat(join(locks.release(grant, LockMode.EXCLUSIVE))).isEqualTo(ReleaseResult.released(0));
    assertThat(join(locks.release(grant, LockMode.EXCLUSIVE)))
        .as("a release past the last hold")
        .isEqualTo(ReleaseResult.NOT_HELD);
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void releaseOfWhatIsNotHeldIsNotHeld() {
    String name = uniqueName("spi-release-not-held");
    LatchkeyBackend backend = open();
    String holder = owner("holder");
    long token = acquired(backend, exclusive(name, holder)).fencingToken();
    LockStore locks = backend.locks();

    assertThat(join(locks.release(lockGrant(name, holder, token), LockMode.SHARED)))
        .as("the shared side of an exclusive holder")
        .isEqualTo(ReleaseResult.NOT_HELD);
    assertThat(join(locks.release(lockGrant(name, owner("stranger"), token), LockMode.EXCLUSIVE)))
        .as("an owner that holds nothing, with the holder's token")
        .isEqualTo(ReleaseResult.NOT_HELD);
    assertThat(
            join(
                locks.release(
                    lockGrant(uniqueName("spi-never-taken"), holder, GrantRef.ANY_TOKEN),
                    LockMode.EXCLUSIVE)))
        .as("a name never taken")
        .isEqualTo(ReleaseResult.NOT_HELD);
    if (has(Feature.ADMIN)) {
      assertThat(holder(backend, name, holder).holds()).isEqualTo(1);
    }
    assertThat(join(locks.release(lockGrant(name, holder, token), LockMode.EXCLUSIVE)))
        .isEqualTo(ReleaseResult.released(0));
  }
}
