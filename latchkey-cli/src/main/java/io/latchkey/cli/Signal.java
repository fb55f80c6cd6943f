package io.latchkey.cli;

import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The signals {@code latchkey exec} can send to its command, by name ({@code TERM}, {@code
 * SIGTERM}).
 */
enum Signal {
  HUP,
  INT,
  QUIT,
  KILL,
  USR1,
  USR2,
  TERM;

  /** Reads a signal name for picocli, with or without {@code SIG}, in any case. */
  static final class Converter implements ITypeConverter<Signal> {
    @Override
    public Signal convert(String value) {
      String name = value.strip().toUpperCase(Locale.ROOT);
      if (name.startsWith("SIG")) {
        name = name.substring(3);
      }
      for (Signal signal : values()) {
        if (signal.name().equals(name)) {
          return signal;
        }
      }
      throw new TypeConversionException(
          "'"
              + value
              + "' is not a signal latchkey sends; use one of HUP, INT, QUIT, KILL, USR1,"
              + " USR2, TERM");
    }
  }
}
