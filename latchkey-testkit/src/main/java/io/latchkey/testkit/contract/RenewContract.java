package io.latchkey.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Feature;
import io.latchkey.LockMode;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.RenewResult;
import io.latchkey.testkit.RequiresFeature;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * SPI conformance: {@link LatchkeyBackend#renew}, which names grants by owner and fencing token and
 * never shortens a lease. Every grant asked for must come back renewed (in neither set) or in
 * {@link RenewResult#gone()}; none of these tests expects {@link RenewResult#failed()}.
 *
 * <ul>
 *   <li>{@link #renewExtendsALiveGrant}: a live lock grant with a short lease is renewed, and its
 *       remaining lease as inspect shows it grows to the new lease (remaining leases are read where
 *       the backend has {@link Feature#ADMIN} and keeps leases, {@link Feature#LEASE_TIME}).
 *   <li>{@link #renewReportsAStaleTokenGone}: a grant naming the holder with another token is gone
 *       and does not extend the holder's lease, while the real grant in the same batch is renewed.
 *   <li>{@link #renewReportsUnknownAndReleasedGrantsGone}: a grant of a name never taken, of an
 *       owner that holds nothing there, and of a released grant are gone; an empty batch is
 *       answered with nothing gone or failed.
 *   <li>{@link #renewWithATinyLeaseNeverShortens}: a renewal with a 1 ms lease confirms the grant
 *       and leaves its long lease as it was.
 *   <li>{@link #expiredGrantIsGoneAndRetakingItIsAnotherGrant}: a grant whose lease ran out is
 *       gone; the same owner then gets a new grant with a larger token, and the old grant can
 *       neither renew nor release it.
 *   <li>{@link #renewRenewsLeasedPermits}: a leased permit is renewed in a batch with a lock grant
 *       (another permit's refusal then waits for the new lease); a permit named with another token
 *       or released is gone.
 * </ul>
 */
public abstract class RenewContract extends SpiContractSupport {

  @Test
  void renewExtendsALiveGrant() {
    String name = uniqueName("spi-renew");
    LatchkeyBackend backend = open();
    String holder = owner("holder");
    long token =
        acquired(backend, request(name, holder, LockMode.EXCLUSIVE, BRIEF_LEASE)).fencingToken();

    RenewResult renewed = join(backend.renew(List.of(lockGrant(name, holder, token)), LONG_LEASE));

    assertThat(renewed.gone()).isEmpty();
    assertThat(renewed.failed()).isEmpty();
    if (leasesVisible()) {
      assertThat(holder(backend, name, holder).remainingLease())
          .as("remaining lease after renewing a %d ms lease to %d ms", BRIEF_LEASE, LONG_LEASE)
          .isGreaterThan(Duration.ofMillis(LONG_LEASE / 2));
    }
  }

  @Test
  void renewReportsAStaleTokenGone() {
    String name = uniqueName("spi-renew-stale");
    String other = uniqueName("spi-renew-live");
    LatchkeyBackend backend = open();
    String holder = owner("holder");
    long shortLease = 5_000;
    long token =
        acquired(backend, request(name, holder, LockMode.EXCLUSIVE, shortLease)).fencingToken();
    long otherToken =
        acquired(backend, request(other, holder, LockMode.EXCLUSIVE, BRIEF_LEASE)).fencingToken();
    GrantRef stale = lockGrant(name, holder, token + 1);
    GrantRef live = lockGrant(other, holder, otherToken);

    RenewResult result = join(backend.renew(List.of(stale, live), LONG_LEASE));

    assertThat(result.gone()).containsExactly(stale);
    assertThat(result.failed()).isEmpty();
    if (leasesVisible()) {
      assertThat(holder(backend, name, holder).remainingLease())
          .as("the holder's lease, not renewed by a stale grant")
          .isLessThanOrEqualTo(Duration.ofMillis(shortLease));
      assertThat(holder(backend, other, holder).remainingLease())
          .as("the live grant's lease, renewed in the same batch")
          .isGreaterThan(Duration.ofMillis(LONG_LEASE / 2));
    }
  }

  @Test
  void renewReportsUnknownAndReleasedGrantsGone() {
    String name = uniqueName("spi-renew-unknown");
    LatchkeyBackend backend = open();
    String holder = owner("holder");
    long token = acquired(backend, exclusive(name, holder)).fencingToken();
    String released = uniqueName("spi-renew-released");
    long releasedToken = acquired(backend, exclusive(released, holder)).fencingToken();
    release(backend, released, holder, releasedToken, LockMode.EXCLUSIVE);
    List<GrantRef> unknown =
        List.of(
            lockGrant(uniqueName("spi-never-taken"), holder, token),
            lockGrant(name, owner("stranger"), token),
            lockGrant(released, holder, releasedToken));

    RenewResult result = join(backend.renew(unknown, LONG_LEASE));

    assertThat(result.gone()).containsExactlyInAnyOrderElementsOf(unknown);
    assertThat(result.failed()).isEmpty();
    RenewResult nothing = join(backend.renew(List.of(), LONG_LEASE));
    assertThat(nothing.gone()).as("an empty batch").isEmpty();
    assertThat(nothing.failed()).as("an empty batch").isEmpty();
  }

  @Test
  void renewWithATinyLeaseNeverShortens() {
    String name = uniqueName("spi-renew-tiny");
    LatchkeyBackend backend = open();
    String holder = owner("holder");
    long token = acquired(backend, exclusive(name, holder)).fencingToken();

    RenewResult result = join(backend.renew(List.of(lockGrant(name, holder, token)), 1));

    assertThat(result.gone()).as("a live grant confirmed").isEmpty();
    assertThat(result.failed()).isEmpty();
    if (leasesVisible()) {
      assertThat(holder(backend, name, holder).remainingLease())
          .as("remaining lease after a renewal with a 1 ms lease")
          .isGreaterThan(Duration.ofMillis(LONG_LEASE / 2));
    }
  }

  @Test
  @RequiresFeature(Feature.LEASE_TIME)
  void expiredGrantIsGoneAndRetakingItIsAnotherGrant() {
    String name = uniqueName("spi-renew-expired");
    LatchkeyBackend backend = open();
    String holder = owner("holder");
    long first =
        acquired(backend, request(name, holder, LockMode.EXCLUSIVE, SHORT_LEASE)).fencingToken();
    GrantRef lost = lockGrant(name, holder, first);

    Awaiting.eventually().until(() -> join(backend.renew(List.of(lost), 1)).gone().contains(lost));
    AcquireResult again = acquired(backend, exclusive(name, holder));

    assertThat(again.holds()).as("a new grant, not a re-entry").isEqualTo(1);
    assertThat(again.fencingToken()).isGreaterThan(first);
    GrantRef current = lockGrant(name, holder, again.fencingToken());
    assertThat(join(backend.renew(List.of(lost, current), LONG_LEASE)).gone())
        .containsExactly(lost);
    assertThat(join(backend.locks().release(lost, LockMode.EXCLUSIVE)))
        .as("the lost grant releases nothing")
        .isEqualTo(ReleaseResult.NOT_HELD);
    assertThat(join(backend.locks().release(current, LockMode.EXCLUSIVE)))
        .isEqualTo(ReleaseResult.released(0));
  }

  @Test
  @RequiresFeature(Feature.LEASED_SEMAPHORE)
  void renewRenewsLeasedPermits() {
    String name = uniqueName("spi-renew-permit");
    LatchkeyBackend backend = open();
    assertThat(join(backend.leasedSemaphores().trySetPermits(name, 1))).isTrue();
    String permitId = owner("permit");
    long token =
        granted(join(backend.leasedSemaphores().tryAcquire(name, permitId, BRIEF_LEASE)))
            .fencingToken();
    GrantRef permit = permitGrant(name, permitId, token);
    GrantRef stale = permitGrant(name, permitId, token + 1);

    String lockName = uniqueName("spi-renew-beside-permit");
    String holder = owner("holder");
    long lockToken = acquired(backend, exclusive(lockName, holder)).fencingToken();

    RenewResult result =
        join(
            backend.renew(
                List.of(permit, stale, lockGrant(lockName, holder, lockToken)), LONG_LEASE));

    assertThat(result.gone()).as("a batch of permits and a lock grant").containsExactly(stale);
    assertThat(result.failed()).isEmpty();
    AcquireResult refusal =
        busy(
            join(backend.leasedSemaphores().tryAcquire(name, owner("other"), LONG_LEASE)),
            LONG_LEASE);
    if (has(Feature.LEASE_TIME)) {
      assertThat(refusal.retryAfterMillis())
          .as("another permit waits for the renewed lease, not the first one")
          .isGreaterThan(LONG_LEASE / 2);
    }
    assertThat(join(backend.leasedSemaphores().release(name, permitId))).isTrue();
    assertThat(join(backend.renew(List.of(permit), LONG_LEASE)).gone())
        .as("a released permit")
        .containsExactly(permit);
  }
}
