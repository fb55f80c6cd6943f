package io.latchkey.zookeeper;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The format of the data latchkey writes into nodes: {@code key=value} lines, values
 * percent-encoded, so that an operator can read them with {@code zkCli get} and no value can break
 * a line.
 */
final class NodeFields {
  private NodeFields() {}

  /**
   * @param fields keys and values, in the order to write them
   * @return the node data
   */
  static byte[] encode(Map<String, ?> fields) {
    Writer writer = new Writer();
    fields.forEach((key, value) -> writer.field(key, String.valueOf(value)));
    return writer.bytes();
  }

  /**
   * Node data written field by field, in order: the same text as {@link #encode(Map)} gives for the
   * same fields, without a map, boxed numbers, or an encoder's buffers: values of ASCII characters
   * (every value of a lock node: owner ids, client ids, host names, numbers, hex ids) are
   * percent-encoded here, character by character, as {@link URLEncoder} does in UTF-8; only a value
   * with other characters goes through {@link URLEncoder}.
   */
  static final class Writer {
    private static final char[] HEX_DIGITS = "0123456789ABCDEF".toCharArray();

    private final StringBuilder text = new StringBuilder(256);

    /**
     * @param key the field's key (never encoded: keys are latchkey's own words)
     * @param value its value, percent-encoded as {@link URLEncoder} does in UTF-8
     * @return this writer
     */
    Writer field(String key, String value) {
      text.append(key).append('=');
      if (isAscii(value)) {
        for (int i = 0; i < value.length(); i++) {
          appendEncoded(value.charAt(i));
        }
      } else {
        text.append(URLEncoder.encode(value, StandardCharsets.UTF_8));
      }
      text.append('\n');
      return this;
    }

    /**
     * @param key the field's key
     * @param value a number, written in decimal (digits and a minus sign need no encoding)
     * @return this writer
     */
    Writer field(String key, long value) {
      text.append(key).append('=').append(value).append('\n');
      return this;
    }

    /**
     * @return the node data
     */
    byte[] bytes() {
      return text.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** One ASCII character as {@link URLEncoder} writes it: kept, a space as '+', else %XX. */
    private void appendEncoded(char c) {
      if ((c >= 'a' && c <= 'z')
          || (c >= 'A' && c <= 'Z')
          || (c >= '0' && c <= '9')
          || c == '.'
          || c == '-'
          || c == '*'
          || c == '_') {
        text.append(c);
      } else if (c == ' ') {
        text.append('+');
      } else {
        text.append('%').append(HEX_DIGITS[c >> 4]).append(HEX_DIGITS[c & 0xF]);
      }
    }

    private static boolean isAscii(String value) {
      for (int i = 0; i < value.length(); i++) {
        if (value.charAt(i) >= 0x80) {
          return false;
        }
      }
      return true;
    }
  }

  /**
   * @param data node data
   * @return its keys and values (lines without {@code =} are skipped)
   */
  static Map<String, String> decode(byte[] data) {
    Map<String, String> fields = new HashMap<>();
    for (String line : new String(data, StandardCharsets.UTF_8).split("\n", -1)) {
      int equals = line.indexOf('=');
      if (equals > 0) {
        fields.put(
            line.substring(0, equals),
            URLDecoder.decode(line.substring(equals + 1), StandardCharsets.UTF_8));
      }
    }
    return fields;
  }
}
