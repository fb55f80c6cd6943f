package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.spi.FenceStore;
import io.latchkey.spi.FenceStore.Epoch;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Checks of a backend's epoch record ({@link FenceStore#epoch}) that every fence store must pass,
 * for the backends' own fence store tests (which start their servers themselves). Each check needs
 * new data: a backend without an epoch record.
 */
public final class EpochRecordChecks {
  private EpochRecordChecks() {}

  /**
   * New data has no record and a read creates none; a record is created with a quarantine that the
   * backend's clock counts down, raised, never lowered, and its quarantine left alone by a raise.
   *
   * @param fences the fence store of a backend with new data
   * @throws Exception if a call fails or does not answer within 10 s
   */
  public static void createdRaisedNeverLowered(FenceStore fences) throws Exception {
    assertThat(epoch(fences, 0, 0)).isEqualTo(new Epoch(0, 0));
    assertThat(epoch(fences, 0, 60_000)).isEqualTo(new Epoch(0, 0));
    Epoch created = epoch(fences, 3, 60_000);
    assertThat(created.value()).isEqualTo(3);
    assertThat(created.quarantineMillis()).isBetween(1L, 60_000L);
    assertThat(epoch(fences, 2, 0).value()).isEqualTo(3);
    Epoch raised = epoch(fences, 5, 1);
    assertThat(raised.value()).isEqualTo(5);
    assertThat(raised.quarantineMillis()).isBetween(1L, created.quarantineMillis());
    assertThat(epoch(fences, 0, 0).value()).isEqualTo(5);
  }

  /**
   * A record created with a short quarantine is out of it within seconds, by the backend's clock.
   *
   * @param fences the fence store of a backend with new data
   * @throws Exception if a call fails or does not answer within 10 s
   */
  public static void aShortQuarantineEnds(FenceStore fences) throws Exception {
    assertThat(epoch(fences, 1, 300).isQuarantined()).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> !epoch(fences, 0, 0).isQuarantined());
    assertThat(epoch(fences, 0, 0)).isEqualTo(new Epoch(1, 0));
  }

  private static Epoch epoch(FenceStore fences, long atLeast, long quarantineMillis)
      throws Exception {
    return fences.epoch(atLeast, quarantineMillis).toCompletableFuture().get(10, TimeUnit.SECONDS);
  }
}
