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
    StringBuilder text = new StringBuilder();
    fields.forEach(
        (key, value) ->
            text.append(key)
                .append('=')
                .append(URLEncoder.encode(String.valueOf(value), StandardCharsets.UTF_8))
                .append('\n'));
    return text.toString().getBytes(StandardCharsets.UTF_8);
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
