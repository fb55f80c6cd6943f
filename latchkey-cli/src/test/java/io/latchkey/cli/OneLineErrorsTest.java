package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.BackendUnavailableException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class OneLineErrorsTest {
  @Test
  void keepsTheFirstLineOfTheMessage() {
    assertThat(OneLineErrors.describe(new IllegalStateException("no server\n--- log ---\nline")))
        .isEqualTo("no server");
  }

  @Test
  void unwrapsWrappersThatOnlyRepeatTheirCause() {
    Exception cause = new BackendUnavailableException("cannot connect to redis://h:1", null);
    assertThat(OneLineErrors.describe(new ExecutionException(cause)))
        .isEqualTo("cannot connect to redis://h:1");
  }

  @Test
  void namesTheExceptionWhenThereIsNoMessage() {
    assertThat(OneLineErrors.describe(new NullPointerException()))
        .isEqualTo("NullPointerException");
  }
}
