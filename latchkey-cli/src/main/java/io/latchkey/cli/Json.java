package io.latchkey.cli;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Writes the {@code --json} output: JSON (RFC 8259) from maps (objects, in their iteration order),
 * lists (arrays), strings, integers, booleans and {@code null}. The output is ASCII: every control
 * and non-ASCII character of a string is written as a six-character Unicode escape (a character
 * outside the BMP as its surrogate pair), so that it reads back the same whatever the encoding of
 * the terminal or the locale, and a lone surrogate cannot make it invalid.
 */
final class Json {
  private Json() {}

  static String write(@Nullable Object value) {
    StringBuilder out = new StringBuilder();
    append(out, value);
    return out.toString();
  }

  private static void append(StringBuilder out, @Nullable Object value) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof String text) {
      quote(out, text);
    } else if (value instanceof Integer || value instanceof Long || value instanceof Boolean) {
      out.append(value);
    } else if (value instanceof Map<?, ?> map) {
      out.append('{');
      String separator = "";
      for (Map.Entry<?, ?> entry : map.entrySet()) {
        out.append(separator);
        quote(out, String.valueOf(entry.getKey()));
        out.append(':');
        append(out, entry.getValue());
        separator = ",";
      }
      out.append('}');
    } else if (value instanceof List<?> list) {
      out.append('[');
      String separator = "";
      for (Object element : list) {
        out.append(separator);
        append(out, element);
        separator = ",";
      }
      out.append(']');
    } else {
      throw new IllegalArgumentException("no JSON form for a " + value.getClass().getName());
    }
  }

  private static void quote(StringBuilder out, String text) {
    out.append('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20 || c >= 0x7f) {
            out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
