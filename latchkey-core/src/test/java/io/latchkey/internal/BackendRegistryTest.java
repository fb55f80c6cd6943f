package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Backend URIs: schemes, unknown schemes, and no secrets in messages. */
class BackendRegistryTest {
  @Test
  void malformedUriMessageHidesThePassword() {
    assertThatThrownBy(() -> BackendRegistry.factoryFor("redis://app:pa ss@host:6379"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("malformed backend URI 'redis://***@host:6379'")
        .message()
        .doesNotContain("pa ss");
  }

  @Test
  void unknownSchemeNamesTheScheme() {
    assertThatThrownBy(() -> BackendRegistry.factoryFor("nosuch://host"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'nosuch:'");
  }

  @Test
  void missingSchemeIsExplained() {
    assertThatThrownBy(() -> BackendRegistry.factoryFor("localhost"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("has no scheme");
  }

  @Test
  void schemeOnlyUriReachesTheProvider() {
    assertThat(BackendRegistry.factoryFor("memory:")).isNotNull();
  }

  @Test
  void redactKeepsUrisWithoutUserInfo() {
    assertThat(BackendRegistry.redact("redis://host:1/0")).isEqualTo("redis://host:1/0");
    assertThat(BackendRegistry.redact("redis://u:p@h:1")).isEqualTo("redis://***@h:1");
  }
}
