package io.latchkey;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class HolderInfoTest {
  @Test
  void toStringMasksAnOwnerTokenAsOwnerTokenDoes() {
    OwnerToken token = OwnerToken.random();
    HolderInfo holder =
        new HolderInfo(token.value(), "c0ffee", LockMode.EXCLUSIVE, 2, Duration.ofSeconds(3), 42);

    assertThat(holder.toString())
        .doesNotContain(token.value())
        .doesNotContain(token.value().substring(10))
        .contains("owner=" + token.value().substring(0, 10) + "…")
        .contains("clientId=c0ffee", "mode=EXCLUSIVE", "holds=2", "PT3S", "fencingToken=42");
    assertThat(token.toString()).isEqualTo("OwnerToken[" + token.value().substring(0, 10) + "…]");
  }

  @Test
  void toStringShowsAThreadOwnerWhole() {
    HolderInfo holder =
        new HolderInfo("c0ffee:7", "c0ffee", LockMode.SHARED, 1, Duration.ofSeconds(1), 1);

    assertThat(holder.toString()).contains("owner=c0ffee:7");
  }
}
