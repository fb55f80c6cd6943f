package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.SemaphoreOperationsContract.assertRefused;
import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Feature;
import io.latchkey.LatchInfo;
import io.latchkey.Lease;
import io.latchkey.LeasedSemaphoreInfo;
import io.latchkey.LockAdmin;
import io.latchkey.PermitInfo;
import io.latchkey.SemaphoreInfo;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import io.latchkey.testkit.RequiresMissingFeature;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Conformance: the operator's view of semaphores, leased semaphores and latches.
 *
 * <ul>
 *   <li>{@link #semaphoresAreInspectedAndListed}: a set semaphore shows its available permits
 *       (negative too) by name and in the list; one never set is absent.
 *   <li>{@link #leasedSemaphoresShowTheirPermitsWithHoldersAndLeases}: a leased semaphore shows its
 *       total and each unexpired permit with its id, client, remaining lease and token, in grant
 *       order; released permits are gone.
 *   <li>{@link #latchesAreShownWhileTheyCountDown}: a latch shows its count while counting down,
 *       and is absent at zero.
 *   <li>{@link #refusedWithoutTheFeature}: a backend without {@link
 *       Feature#SYNCHRONIZER_INSPECTION} refuses each view with {@link
 *       UnsupportedFeatureException}.
 * </ul>
 */
public abstract class SynchronizerInspectionContract extends ContractSupport {
  private static final Duration LONG_LEASE = Duration.ofSeconds(30);

  @Test
  @RequiresFeature({Feature.SEMAPHORE, Feature.ADMIN, Feature.SYNCHRONIZER_INSPECTION})
  public void semaphoresAreInspectedAndListed() {
    String name = uniqueName("inspect-semaphore");
    LockAdmin admin = newClient().admin();
    assertThat(admin.inspectSemaphore(name)).isEmpty();
    client().semaphore(name).trySetPermits(2);
    client().semaphore(name).addPermits(-5);

    assertThat(admin.inspectSemaphore(name)).contains(new SemaphoreInfo(name, -3));
    assertThat(admin.listSemaphores()).contains(new SemaphoreInfo(name, -3));
    assertThat(admin.listSemaphores())
        .extracting(SemaphoreInfo::name)
        .isSortedAccordingTo(String::compareTo);
  }

  @Test
  @RequiresFeature({Feature.LEASED_SEMAPHORE, Feature.ADMIN, Feature.SYNCHRONIZER_INSPECTION})
  public void leasedSemaphoresShowTheirPermitsWithHoldersAndLeases() throws Exception {
    String name = uniqueName("inspect-leased");
    LockAdmin admin = newClient().admin();
    assertThat(admin.inspectLeasedSemaphore(name)).isEmpty();
    client().leasedSemaphore(name).trySetPermits(3);
    Lease first = client().leasedSemaphore(name).acquire(Duration.ZERO, LONG_LEASE);
    Lease second = newClient().leasedSemaphore(name).acquire(Duration.ZERO);

    LeasedSemaphoreInfo info = admin.inspectLeasedSemaphore(name).orElseThrow();
    assertThat(info.name()).isEqualTo(name);
    assertThat(info.totalPermits()).isEqualTo(3);
    assertThat(info.acquiredPermits()).isEqualTo(2);
    assertThat(info.availablePermits()).isEqualTo(1);
    assertThat(info.permits())
        .extracting(PermitInfo::permitId)
        .containsExactly(first.holderId(), second.holderId());
    PermitInfo shown = info.permits().get(0);
    assertThat(shown.clientId()).isEqualTo(client().clientId());
    assertThat(shown.fencingToken()).isEqualTo(first.fencingToken());
    assertThat(shown.remainingLease()).isPositive().isLessThanOrEqualTo(LONG_LEASE);
    assertThat(admin.listLeasedSemaphores()).extracting(LeasedSemaphoreInfo::name).contains(name);

    first.release();
    second.release();
    assertThat(admin.inspectLeasedSemaphore(name).orElseThrow().permits()).isEmpty();
  }

  @Test
  @RequiresFeature({Feature.COUNT_DOWN_LATCH, Feature.ADMIN, Feature.SYNCHRONIZER_INSPECTION})
  public void latchesAreShownWhileTheyCountDown() {
    String name = uniqueName("inspect-latch");
    LockAdmin admin = newClient().admin();
    assertThat(admin.inspectLatch(name)).isEmpty();
    client().countDownLatch(name).trySetCount(2);
    client().countDownLatch(name).countDown();

    assertThat(admin.inspectLatch(name)).contains(new LatchInfo(name, 1));
    assertThat(admin.listLatches()).contains(new LatchInfo(name, 1));
    client().countDownLatch(name).countDown();
    assertThat(admin.inspectLatch(name)).isEmpty();
    assertThat(admin.listLatches()).extracting(LatchInfo::name).doesNotContain(name);
  }

  @Test
  @RequiresFeature(Feature.ADMIN)
  @RequiresMissingFeature(Feature.SYNCHRONIZER_INSPECTION)
  public void refusedWithoutTheFeature() {
    LockAdmin admin = client().admin();
    Feature missing = Feature.SYNCHRONIZER_INSPECTION;
    assertRefused(() -> admin.inspectSemaphore("a"), missing);
    assertRefused(() -> admin.inspectLeasedSemaphore("a"), missing);
    assertRefused(() -> admin.inspectLatch("a"), missing);
    assertRefused(admin::listSemaphores, missing);
    assertRefused(admin::listLeasedSemaphores, missing);
    assertRefused(admin::listLatches, missing);
  }
}
