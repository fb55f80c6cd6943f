package io.latchkey.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A strict JSON (RFC 8259) parser for the tests, written apart from {@link Json} so that the
 * writer's output is checked by code that does not share its assumptions. Objects become maps,
 * arrays lists, numbers {@code Long} (the CLI writes only integers), and {@code null} null.
 */
final class JsonParser {
  private final String text;
  private int at;

  private JsonParser(String text) {
    this.text = text;
  }

  static @Nullable Object parse(String text) {
    JsonParser parser = new JsonParser(text);
    parser.whitespace();
    Object value = parser.value();
    parser.whitespace();
    if (parser.at != text.length()) {
      throw parser.error("text after the value");
    }
    return value;
  }

  @SuppressWarnings("unchecked")
  static Map<String, @Nullable Object> object(String text) {
    Object value = parse(text);
    if (!(value instanceof Map)) {
      throw new IllegalArgumentException("not a JSON object: " + text);
    }
    return (Map<String, @Nullable Object>) value;
  }

  private @Nullable Object value() {
    if (at >= text.length()) {
      throw error("a value expected");
    }
    char c = text.charAt(at);
    return switch (c) {
      case '{' -> object();
      case '[' -> array();
      case '"' -> string();
      case 't' -> literal("true", true);
      case 'f' -> literal("false", false);
      case 'n' -> literal("null", null);
      default -> number();
    };
  }

  private Map<String, @Nullable Object> object() {
    Map<String, @Nullable Object> object = new LinkedHashMap<>();
    expect('{');
    whitespace();
    if (peek('}')) {
      at++;
      return object;
    }
    while (true) {
      whitespace();
      String key = string();
      if (object.containsKey(key)) {
        throw error("duplicate key " + key);
      }
      whitespace();
      expect(':');
      whitespace();
      object.put(key, value());
      whitespace();
      if (peek(',')) {
        at++;
      } else {
        expect('}');
        return object;
      }
    }
  }

  private List<@Nullable Object> array() {
    List<@Nullable Object> array = new ArrayList<>();
    expect('[');
    whitespace();
    if (peek(']')) {
      at++;
      return array;
    }
    while (true) {
      whitespace();
      array.add(value());
      whitespace();
      if (peek(',')) {
        at++;
      } else {
        expect(']');
        return array;
      }
    }
  }

  private String string() {
    expect('"');
    StringBuilder out = new StringBuilder();
    while (true) {
      if (at >= text.length()) {
        throw error("unterminated string");
      }
      char c = text.charAt(at++);
      if (c == '"') {
        return out.toString();
      }
      if (c < 0x20) {
        throw error("unescaped control character");
      }
      if (c != '\\') {
        out.append(c);
        continue;
      }
      char escape = text.charAt(at++);
      switch (escape) {
        case '"', '\\', '/' -> out.append(escape);
        case 'b' -> out.append('\b');
        case 'f' -> out.append('\f');
        case 'n' -> out.append('\n');
        case 'r' -> out.append('\r');
        case 't' -> out.append('\t');
        case 'u' -> {
          out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
          at += 4;
        }
        default -> throw error("bad escape \\" + escape);
      }
    }
  }

  private Long number() {
    int start = at;
    if (peek('-')) {
      at++;
    }
    while (at < text.length() && Character.isDigit(text.charAt(at))) {
      at++;
    }
    String digits = text.substring(start, at);
    if (digits.isEmpty() || digits.equals("-") || digits.matches("-?0\\d+")) {
      throw error("not an integer");
    }
    return Long.parseLong(digits);
  }

  private @Nullable Object literal(String word, @Nullable Object value) {
    if (!text.startsWith(word, at)) {
      throw error(word + " expected");
    }
    at += word.length();
    return value;
  }

  private void whitespace() {
    while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
      at++;
    }
  }

  private boolean peek(char c) {
    return at < text.length() && text.charAt(at) == c;
  }

  private void expect(char c) {
    if (!peek(c)) {
      throw error("'" + c + "' expected");
    }
    at++;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException(what + " at " + at + " in: " + text);
  }
}
