package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.PermitInfo;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * What the operator's view reads from a permit node ({@link
 * ZooKeeperLeasedSemaphoreStore#permitInfo}): the remaining lease of a TTL permit by the server's
 * clock, and of an ephemeral one its client's session timeout, never a made-up deadline.
 */
class ZooKeeperPermitInfoTest {
  private static final long CREATED = 1_000_000;
  private static final long ZXID = 42;

  /** The base of the data's tokens ({@link TokenBase}). */
  private static final long BASE = CREATED << TokenBase.MILLIS_SHIFT;

  /** The permit's token: its creation zxid above the base. */
  private static final long TOKEN = BASE + ZXID;

  @Test
  void aTtlPermitShowsWhatIsLeftOfItsLeaseByTheServersClock() {
    assertThat(read("p-abc%2F1", Map.of("client", "c1", "leaseMs", 5_000), CREATED + 2_000))
        .isEqualTo(new PermitInfo("abc/1", "c1", Duration.ofSeconds(3), TOKEN));
  }

  @Test
  void aTtlPermitMadeAfterTheClockWasReadShowsNoMoreThanItsLease() {
    assertThat(read("p-a", Map.of("client", "c1", "leaseMs", 5_000), CREATED - 700))
        .isEqualTo(new PermitInfo("a", "c1", Duration.ofSeconds(5), TOKEN));
  }

  @Test
  void aTtlPermitWhoseLeaseRanOutIsNotShownThoughTheServerHasNotDeletedIt() {
    assertThat(read("p-a", Map.of("client", "c1", "leaseMs", 5_000), CREATED + 5_000)).isNull();
  }

  @Test
  void anEphemeralPermitShowsItsClientsSessionTimeout() {
    assertThat(read("p-a", Map.of("client", "c1", "sessionTimeoutMs", 3_000), CREATED + 60_000))
        .isEqualTo(new PermitInfo("a", "c1", Duration.ofSeconds(3), TOKEN));
  }

  @Test
  void anEphemeralPermitWithoutASessionTimeoutShowsZeroForUnknown() {
    assertThat(read("p-a", Map.of("client", "c1"), CREATED))
        .isEqualTo(new PermitInfo("a", "c1", Duration.ZERO, TOKEN));
  }

  /** Reads a permit node made at {@link #CREATED} in zxid {@link #ZXID} with these fields. */
  private static @Nullable PermitInfo read(String node, Map<String, Object> fields, long now) {
    Stat stat = new Stat();
    stat.setCzxid(ZXID);
    stat.setCtime(CREATED);
    stat.setMtime(CREATED);
    return ZooKeeperLeasedSemaphoreStore.permitInfo(
        node,
        new ZooKeeperCalls.Read(NodeFields.encode(new LinkedHashMap<>(fields)), stat),
        now,
        BASE);
  }
}
