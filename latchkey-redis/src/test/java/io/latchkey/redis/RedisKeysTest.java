package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.spi.ResourceType;
import io.lettuce.core.cluster.SlotHash;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class RedisKeysTest {
  private final RedisKeys keys = new RedisKeys("latchkey:");

  static Stream<String> awkwardNames() {
    return Stream.of(
        "orders/42",
        "a{b}c",
        "}{",
        "{}",
        "with space",
        "ünïcödé 日本 🔒",
        "100%",
        "%7D",
        "lone \uD800 high",
        "lone \uDC00 low",
        "é".repeat(255),
        "x".repeat(255));
  }

  @ParameterizedTest
  @MethodSource("awkwardNames")
  void everyKeyAndChannelOfAResourceSharesOneHashSlot(String name) {
    List<String> lockKeys =
        List.of(
            keys.lock(name),
            keys.lockFence(name),
            keys.lockQueue(name),
            keys.lockQueueDeadlines(name),
            keys.lockQueueWriters(name),
            keys.lockQueueHandoff(name),
            keys.wakeups(ResourceType.LOCK, name));
    assertThat(lockKeys)
        .extracting(SlotHash::getSlot)
        .containsOnly(SlotHash.getSlot(keys.lock(name)));
    List<String> leasedKeys =
        List.of(
            keys.leasedSemaphore(name),
            keys.leasedPermits(name),
            keys.wakeups(ResourceType.LEASED_SEMAPHORE, name));
    assertThat(leasedKeys)
        .extracting(SlotHash::getSlot)
        .containsOnly(SlotHash.getSlot(keys.leasedSemaphore(name)));
  }

  @ParameterizedTest
  @MethodSource("awkwardNames")
  void theTagHoldsTheWholeNameAndReadsBack(String name) {
    String key = keys.lock(name);
    String tag = key.substring(key.indexOf('{') + 1, key.indexOf('}'));

    assertThat(key).endsWith("}").startsWith("latchkey:lock:{");
    assertThat(key.indexOf('}')).isEqualTo(key.length() - 1);
    assertThat(tag).doesNotContain("{");
    assertThat(keys.lockName(key)).contains(name);
  }

  @Test
  void distinctNamesNeverShareAKeyEvenAfterUtf8Encoding() {
    List<String> names =
        List.of("a}b", "a%7Db", "a%257Db", "a\uD800", "a\uDC00", "a?", "a%uD800", "a{", "a%7B");
    Set<String> encoded = new HashSet<>();
    for (String name : names) {
      encoded.add(
          new String(
              keys.lock(name).getBytes(java.nio.charset.StandardCharsets.UTF_8),
              java.nio.charset.StandardCharsets.UTF_8));
    }
    assertThat(encoded).hasSameSizeAs(names);
  }

  @Test
  void onlyHolderHashesReadAsLockNames() {
    assertThat(keys.lockName(keys.lockFence("x"))).isEmpty();
    assertThat(keys.lockName(keys.lockQueue("x"))).isEmpty();
    assertThat(keys.lockName(keys.lockQueueWriters("x"))).isEmpty();
    assertThat(keys.lockName(keys.semaphore("x"))).isEmpty();
    assertThat(keys.lockName("latchkey:lock:{bad%zz}")).isEmpty();
    assertThat(keys.lockName("other:lock:{x}")).isEmpty();
  }

  @Test
  void onlyMainKeysReadAsSynchronizerNames() {
    assertThat(keys.semaphoreName(keys.semaphore("a}b"))).contains("a}b");
    assertThat(keys.semaphoreName(keys.leasedSemaphore("x"))).isEmpty();
    assertThat(keys.leasedSemaphoreName(keys.leasedSemaphore("a{b"))).contains("a{b");
    assertThat(keys.leasedSemaphoreName(keys.leasedPermits("x"))).isEmpty();
    assertThat(keys.leasedSemaphoreName(keys.semaphore("x"))).isEmpty();
    assertThat(keys.latchName(keys.latch("x"))).contains("x");
    assertThat(keys.latchName(keys.lock("x"))).isEmpty();
    assertThat(keys.semaphoreScanPattern()).isEqualTo("latchkey:semaphore:{*}");
    assertThat(keys.leasedSemaphoreScanPattern()).isEqualTo("latchkey:leased-semaphore:{*}");
    assertThat(keys.latchScanPattern()).isEqualTo("latchkey:latch:{*}");
  }

  @Test
  void scanPatternsEscapeTheirPrefix() {
    RedisKeys odd = new RedisKeys("app*[1]?\\:");
    assertThat(odd.lockScanPattern()).isEqualTo("app\\*\\[1\\]\\?\\\\:lock:{*}");
    assertThat(odd.presenceScanPattern()).isEqualTo("app\\*\\[1\\]\\?\\\\:client:*");
    assertThat(odd.clientId(odd.presence("abc"))).isEqualTo("abc");
  }

  @Test
  void aPrefixWithBracesIsRefused() {
    assertThatThrownBy(() -> new RedisKeys("my{app}:"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("hash tag");
  }
}
