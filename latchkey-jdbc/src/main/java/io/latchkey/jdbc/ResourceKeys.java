package io.latchkey.jdbc;

import io.latchkey.spi.ResourceType;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The keys of the lease table's rows: SHA-256 digests (64 hex digits) of a resource's kind and name
 * and of a holder's id. Names of any alphabet and length thus become keys of one width, compared
 * byte for byte whatever the column's collation (MariaDB's default one ignores case and trailing
 * spaces), and a name is never spliced into SQL. Every row also keeps the name itself, and a load
 * checks it, so that a collision could never pass unnoticed.
 */
final class ResourceKeys {
  private ResourceKeys() {}

  static String resource(ResourceType type, String name) {
    return sha256(type.name() + ":" + name);
  }

  static String holder(String holderId) {
    return sha256(holderId);
  }

  private static String sha256(String text) {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(digest.digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("every JDK has SHA-256", e);
    }
  }
}
