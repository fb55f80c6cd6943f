package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine.TypeConversionException;

class DurationsTest {
  @Test
  void readsNumbersWithUnits() {
    assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(Durations.parse("30s")).isEqualTo(Duration.ofSeconds(30));
    assertThat(Durations.parse("2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(Durations.parse("1h")).isEqualTo(Duration.ofHours(1));
    assertThat(Durations.parse("3d")).isEqualTo(Duration.ofDays(3));
    assertThat(Durations.parse(" 1M30S ")).isEqualTo(Duration.ofSeconds(90));
    assertThat(Durations.parse("1s500ms")).isEqualTo(Duration.ofMillis(1500));
    assertThat(Durations.parse("0")).isEqualTo(Duration.ZERO);
    assertThat(Durations.parse("0s")).isEqualTo(Duration.ZERO);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "30", "s", "1.5s", "-1s", "30 s", "1sx", "x1s", "1w", "PT30S"})
  void refusesWhatIsNotADuration(String text) {
    assertThatThrownBy(() -> Durations.parse(text))
        .isInstanceOf(TypeConversionException.class)
        .hasMessageContaining("is not a duration")
        .hasMessageContaining("500ms, 30s, 2m, 1h");
  }

  @Test
  void refusesMoreThanAYear() {
    assertThatThrownBy(() -> Durations.parse("366d"))
        .isInstanceOf(TypeConversionException.class)
        .hasMessageContaining("365d");
  }

  @Test
  void showsDurationsInTheSameUnits() {
    assertThat(Durations.format(Duration.ofMillis(850))).isEqualTo("850ms");
    assertThat(Durations.format(Duration.ofMillis(29_540))).isEqualTo("29.5s");
    assertThat(Durations.format(Duration.ofSeconds(10))).isEqualTo("10s");
    assertThat(Durations.format(Duration.ofSeconds(598))).isEqualTo("9m58s");
    assertThat(Durations.format(Duration.ofMinutes(125))).isEqualTo("2h5m");
    assertThat(Durations.format(Duration.ofHours(76))).isEqualTo("3d4h");
  }

  @Test
  void readsSignalNames() {
    Signal.Converter signals = new Signal.Converter();
    assertThat(signals.convert("TERM")).isEqualTo(Signal.TERM);
    assertThat(signals.convert("sigkill")).isEqualTo(Signal.KILL);
    assertThat(signals.convert("Hup")).isEqualTo(Signal.HUP);
    assertThatThrownBy(() -> signals.convert("9"))
        .isInstanceOf(TypeConversionException.class)
        .hasMessageContaining("HUP, INT");
  }
}
