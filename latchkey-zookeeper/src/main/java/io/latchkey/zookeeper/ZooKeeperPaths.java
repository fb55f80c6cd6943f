package io.latchkey.zookeeper;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Where latchkey's records live in the node tree, relative to the backend's namespace:
 *
 * <pre>
 * /locks/{name}/lk-{owner digest}-{__WRIT__|__READ__}{sequence}   one ephemeral sequential node per owner
 * /locks/{name}/fence-{offset}-{raised}                           persistent, once a quorum raised the lock
 * /semaphores/{name}                                              data: available permits
 * /leased-semaphores/{name}                                       data: total; children p-{permit id},
 *                                                                 ephemeral, or TTL nodes (explicit leases);
 *                                                                 data: client, host, pid, leaseMs (TTL)
 * /latches/{name}                                                 data: count; absent at zero
 * /clients/{client id}                                            presence, ephemeral
 * /clock                                                          written to read the server's time
 * /ttl-probe/never                                                never made: probes for TTL nodes
 * /epoch                                                          a quorum member's epoch record
 * /token-base                                                     the tokens' base: its ctime (TokenBase)
 * </pre>
 *
 * A name is data: it becomes one path segment by percent-encoding every character outside {@code
 * [A-Za-z0-9_.-]} (and the dots of {@code .} and {@code ..}), so that no name can reach outside its
 * record. An owner appears in a node's name only as a digest: an owner token is a credential.
 */
final class ZooKeeperPaths {
  static final String LOCKS = "/locks";
  static final String SEMAPHORES = "/semaphores";
  static final String LEASED_SEMAPHORES = "/leased-semaphores";
  static final String LATCHES = "/latches";
  static final String CLIENTS = "/clients";
  static final String CLOCK = "/clock";
  static final String EPOCH = "/epoch";

  /** The record whose creation time makes the fencing tokens' base ({@link TokenBase}). */
  static final String TOKEN_BASE = "/token-base";

  /**
   * Where the backend probes for TTL nodes: a node whose parent latchkey never creates, so that a
   * server that takes TTL nodes answers NONODE and nothing is made.
   */
  static final String TTL_PROBE = "/ttl-probe/never";

  /** The prefix of latchkey's lock nodes; other nodes in a lock's directory are foreign. */
  static final String LOCK_NODE_PREFIX = "lk-";

  /** The prefix of a lock's fence record ({@link LockFence}), which is no lock node. */
  static final String FENCE_PREFIX = "fence-";

  /** Marks an exclusive (write) node, the marker Curator's read-write lock uses too. */
  static final String WRITE_MARKER = "__WRIT__";

  /** Marks a shared (read) node, the marker Curator's read-write lock uses too. */
  static final String READ_MARKER = "__READ__";

  /** A leased permit's node name is this prefix and the permit id. */
  static final String PERMIT_PREFIX = "p-";

  private static final int DIGEST_HEX_CHARS = 32;
  private static final HexFormat HEX = HexFormat.of();
  private static final MessageDigest SHA_256 = newSha256();

  private ZooKeeperPaths() {}

  static String lockDir(String name) {
    return LOCKS + "/" + segment(name);
  }

  static String semaphore(String name) {
    return SEMAPHORES + "/" + segment(name);
  }

  static String leasedSemaphore(String name) {
    return LEASED_SEMAPHORES + "/" + segment(name);
  }

  static String permit(String name, String permitId) {
    return leasedSemaphore(name) + "/" + PERMIT_PREFIX + segment(permitId);
  }

  static String latch(String name) {
    return LATCHES + "/" + segment(name);
  }

  static String client(String clientId) {
    return CLIENTS + "/" + segment(clientId);
  }

  /**
   * @param owner an owner id
   * @return the hex digest of the owner that names its lock nodes
   */
  static String ownerDigest(String owner) {
    byte[] hash = sha256().digest(owner.getBytes(StandardCharsets.UTF_8));
    return HEX.formatHex(hash, 0, DIGEST_HEX_CHARS / 2);
  }

  /**
   * A fresh SHA-256 digest: a copy of one made once, without a provider lookup on every acquire.
   */
  private static MessageDigest sha256() {
    try {
      return (MessageDigest) SHA_256.clone();
    } catch (CloneNotSupportedException notCloneable) {
      return newSha256();
    }
  }

  private static MessageDigest newSha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }

  /**
   * @param digest the owner's digest
   * @param exclusive the mode the node is created for
   * @return the name prefix of a new sequential lock node (ZooKeeper appends the sequence)
   */
  static String lockNodePrefix(String digest, boolean exclusive) {
    return LOCK_NODE_PREFIX + digest + "-" + (exclusive ? WRITE_MARKER : READ_MARKER);
  }

  /**
   * @param name any string
   * @return one path segment that stands for it and nothing else
   */
  static String segment(String name) {
    if (name.equals(".") || name.equals("..")) {
      return name.replace(".", "%2E");
    }
    StringBuilder encoded = new StringBuilder(name.length());
    for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if ((c >= 'a' && c <= 'z')
          || (c >= 'A' && c <= 'Z')
          || (c >= '0' && c <= '9')
          || c == '_'
          || c == '.'
          || c == '-') {
        encoded.append((char) c);
      } else {
        encoded.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)));
        encoded.append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      }
    }
    return encoded.toString();
  }

  /**
   * @param segment a segment made by {@link #segment}
   * @return the name it stands for
   */
  static String name(String segment) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(segment.length());
    for (int i = 0; i < segment.length(); i++) {
      char c = segment.charAt(i);
      if (c == '%' && i + 2 < segment.length()) {
        bytes.write(Integer.parseInt(segment.substring(i + 1, i + 3), 16));
        i += 2;
      } else {
        bytes.write((byte) c);
      }
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }
}
