package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class RedisVersionTest {
  @Test
  void readsTheVersionLineOfInfoServer() {
    RedisVersion version =
        RedisVersion.ofInfo("# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n");

    assertThat(version).isEqualTo(new RedisVersion(7, 0, 15));
    assertThat(version).hasToString("7.0.15");
    assertThat(version.isAtLeast(7, 0)).isTrue();
    assertThat(version.isAtLeast(6, 2)).isTrue();
    assertThat(version.isAtLeast(7, 2)).isFalse();
    assertThat(RedisVersion.ofInfo("redis_version:6.2.14\n").isAtLeast(7, 0)).isFalse();
  }

  @Test
  void refusesAVersionOlderThanSixPointTwoNamingIt() {
    assertThatThrownBy(
            () -> RedisVersion.supported("# Server\r\nredis_version:6.0.16\r\n", "10.0.0.5:6379"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "10.0.0.5:6379 runs Redis 6.0.16, but latchkey needs Redis 6.2 or later (its scripts"
                + " use commands of 6.2)");
    assertThat(RedisVersion.supported("redis_version:6.2.0\r\n", "s")).hasToString("6.2.0");
    assertThat(RedisVersion.supported("redis_version:7.4.1\r\n", "s").isAtLeast(7, 0)).isTrue();
  }

  @Test
  void refusesInfoWithoutAVersion() {
    assertThatThrownBy(() -> RedisVersion.ofInfo("# Server\r\n"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no redis_version");
    assertThatThrownBy(() -> RedisVersion.ofInfo("redis_version:seven\r\n"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("unreadable");
  }
}
