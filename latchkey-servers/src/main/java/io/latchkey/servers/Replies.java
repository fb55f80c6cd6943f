package io.latchkey.servers;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Shape checks for parsed RESP replies, so that callers read them without unchecked casts. */
final class Replies {
  private Replies() {}

  static List<?> list(@Nullable Object reply, String what) {
    if (reply instanceof List<?>) {
      return (List<?>) reply;
    }
    throw new IllegalStateException("expected an array reply for " + what + " but got " + reply);
  }

  static long integer(@Nullable Object reply, String what) {
    if (reply instanceof Long number) {
      return number;
    }
    if (reply instanceof String text) {
      try {
        return Long.parseLong(text);
      } catch (NumberFormatException e) {
        throw new IllegalStateException("expected a number for " + what + " but got " + reply, e);
      }
    }
    throw new IllegalStateException("expected a number for " + what + " but got " + reply);
  }

  /** Reads a flat {@code [field, value, field, value, ...]} reply, as Sentinel sends. */
  static Map<String, String> fields(@Nullable Object reply, String what) {
    List<?> flat = list(reply, what);
    Map<String, String> fields = new LinkedHashMap<>();
    for (int i = 0; i + 1 < flat.size(); i += 2) {
      fields.put(String.valueOf(flat.get(i)), String.valueOf(flat.get(i + 1)));
    }
    return Collections.unmodifiableMap(fields);
  }
}
