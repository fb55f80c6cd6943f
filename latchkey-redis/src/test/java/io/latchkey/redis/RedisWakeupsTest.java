package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.spi.Wakeup;
import org.junit.jupiter.api.Test;

class RedisWakeupsTest {
  @Test
  void readsTheMessagesTheScriptsPublish() {
    assertThat(RedisWakeups.parse("1")).isEqualTo(Wakeup.of(1));
    assertThat(RedisWakeups.parse("7")).isEqualTo(Wakeup.of(7));
    assertThat(RedisWakeups.parse("all")).isEqualTo(Wakeup.of(Wakeup.ALL));
    assertThat(RedisWakeups.parse("1 owner with spaces"))
        .isEqualTo(Wakeup.forOwner("owner with spaces"));
  }

  @Test
  void refusesForeignMessages() {
    assertThatThrownBy(() -> RedisWakeups.parse("hello"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RedisWakeups.parse("0")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RedisWakeups.parse("")).isInstanceOf(IllegalArgumentException.class);
  }
}
