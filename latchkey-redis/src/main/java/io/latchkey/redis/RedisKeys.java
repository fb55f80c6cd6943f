package io.latchkey.redis;

import io.latchkey.spi.ResourceType;
import java.util.Optional;

/**
 * Where each record lives in Redis.
 *
 * <p>Key layout, with the default prefix {@code latchkey:} and the resource name {@code N} escaped
 * into a hash tag {@code {N}}:
 *
 * <pre>
 * latchkey:lock:{N}                      hash   owner -> expiresAt:token:exclusive:shared:clientId
 *                                               PEXPIRE = the latest holder expiry
 * latchkey:lock:{N}:fence                string the last fencing token; never expires
 * latchkey:lock:{N}:queue                zset   waiting owner, scored by arrival
 * latchkey:lock:{N}:queue-deadlines      zset   waiting owner, scored by the deadline of its place
 * latchkey:lock:{N}:queue-writers        zset   waiting owner that asked for the exclusive mode,
 *                                               scored by arrival (readers wait behind it)
 *                                               PEXPIRE of all three = the latest deadline
 * latchkey:lock:{N}:queue-handoff        string 'wokenAt:owner': the queued owner last woken, whose
 *                                               hand-off is pending (LockRequest); PX = the end
 *                                               of that owner's place
 * latchkey:lock:{N}:wakeups              pub/sub channel of the lock (a shard channel in Cluster)
 * latchkey:semaphore:{N}                 string available permits
 * latchkey:semaphore:{N}:wakeups         pub/sub channel
 * latchkey:leased-semaphore:{N}          hash   'total' -> permits, 'fence' -> last token; no expiry
 * latchkey:leased-semaphore:{N}:permits  hash   permit id -> expiresAt:token:clientId
 *                                               PEXPIRE = the latest permit expiry
 * latchkey:leased-semaphore:{N}:wakeups  pub/sub channel
 * latchkey:latch:{N}                     string count; deleted when it reaches zero
 * latchkey:latch:{N}:wakeups             pub/sub channel
 * latchkey:client:{clientId}             hash   host, pid, started; PEXPIRE a bit above the lease
 * latchkey:revocations:clientId          pub/sub channel of the revocation requests for the grants
 *                                               of one client (never a shard channel)
 * latchkey:replication-barrier:{N}       string written before a WAIT (waitReplicas); PX 1 s
 * latchkey:quorum:{epoch}                string the epoch record of a quorum member (FenceStore);
 *                                               never expires
 * latchkey:quorum:{epoch}:quarantine     string the quorum's quarantine marker of an emptied
 *                                               member; PX = the quarantine
 * </pre>
 *
 * Every key and channel of one resource carries the same hash tag, so a script may touch all of
 * them in Redis Cluster, where they land in one slot. The tag holds the name with the percent sign,
 * both braces and unpaired surrogates percent-escaped ({@code %25}, {@code %7B}, {@code %7D},
 * {@code %uD800}): a tag cannot end early, and distinct names stay distinct keys after UTF-8
 * encoding (which would turn every unpaired surrogate into the same {@code ?}). The prefix may not
 * contain braces, or it would move the tag.
 */
final class RedisKeys {
  private static final String LOCK = "lock:";
  private static final String SEMAPHORE = "semaphore:";
  private static final String LEASED_SEMAPHORE = "leased-semaphore:";
  private static final String LATCH = "latch:";
  private static final String CLIENT = "client:";
  private static final String REVOCATIONS = "revocations:";
  private static final String WAKEUPS = ":wakeups";
  private static final String FENCE = ":fence";
  private static final String QUEUE = ":queue";
  private static final String QUEUE_DEADLINES = ":queue-deadlines";
  private static final String QUEUE_WRITERS = ":queue-writers";
  private static final String QUEUE_HANDOFF = ":queue-handoff";

  private final String prefix;

  /**
   * The keys of recently used lock names, in a slot by the name's hash (a newer name replaces an
   * older one in its slot): an application that uses a lock again skips escaping its name and
   * building six keys. Slots are read and written without locking; each holds an immutable record
   * whose final fields every thread sees complete.
   */
  private final LockKeys[] recentLocks = new LockKeys[256];

  /**
   * @param prefix the prefix of every key; must not contain braces
   */
  RedisKeys(String prefix) {
    if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
      throw new IllegalArgumentException(
          "key prefix must not contain '{' or '}' (they would move the hash tag), was '"
              + prefix
              + "'");
    }
    this.prefix = prefix;
  }

  String prefix() {
    return prefix;
  }

  String lock(String name) {
    return prefix + LOCK + tag(name);
  }

  String lockFence(String name) {
    return lock(name) + FENCE;
  }

  String lockQueue(String name) {
    return lock(name) + QUEUE;
  }

  String lockQueueDeadlines(String name) {
    return lock(name) + QUEUE_DEADLINES;
  }

  String lockQueueWriters(String name) {
    return lock(name) + QUEUE_WRITERS;
  }

  String lockQueueHandoff(String name) {
    return lock(name) + QUEUE_HANDOFF;
  }

  /**
   * The KEYS of the acquire script: holders, fencing counter, wait queue, queue deadlines, queued
   * writers, wake-up channel, hand-off.
   */
  String[] lockAcquireKeys(String name) {
    LockKeys lock = lockKeys(name);
    return new String[] {
      lock.holders,
      lock.fence,
      lock.queue,
      lock.queueDeadlines,
      lock.queueWriters,
      lock.wakeups,
      lock.queueHandoff
    };
  }

  /**
   * The KEYS of the scripts that change holders or the queue and may wake the queue head: holders,
   * wait queue, queue deadlines, queued writers, wake-up channel, hand-off.
   */
  String[] lockQueueKeys(String name) {
    LockKeys lock = lockKeys(name);
    return new String[] {
      lock.holders,
      lock.queue,
      lock.queueDeadlines,
      lock.queueWriters,
      lock.wakeups,
      lock.queueHandoff
    };
  }

  /** The keys of a lock, from the cache of recently used names or built from one escaped name. */
  private LockKeys lockKeys(String name) {
    int hash = name.hashCode();
    int slot = (hash ^ (hash >>> 16)) & (recentLocks.length - 1);
    LockKeys cached = recentLocks[slot];
    if (cached != null && cached.name.equals(name)) {
      return cached;
    }
    String holders = lock(name);
    LockKeys built =
        new LockKeys(
            name,
            holders,
            holders + FENCE,
            holders + QUEUE,
            holders + QUEUE_DEADLINES,
            holders + QUEUE_WRITERS,
            holders + WAKEUPS,
            holders + QUEUE_HANDOFF);
    recentLocks[slot] = built;
    return built;
  }

  /** All keys of one lock. */
  private record LockKeys(
      String name,
      String holders,
      String fence,
      String queue,
      String queueDeadlines,
      String queueWriters,
      String wakeups,
      String queueHandoff) {}

  String semaphore(String name) {
    return prefix + SEMAPHORE + tag(name);
  }

  String leasedSemaphore(String name) {
    return prefix + LEASED_SEMAPHORE + tag(name);
  }

  String leasedPermits(String name) {
    return leasedSemaphore(name) + ":permits";
  }

  String latch(String name) {
    return prefix + LATCH + tag(name);
  }

  /** The record a renewal of a holder of this type extends. */
  String leaseRecord(ResourceType type, String name) {
    return switch (type) {
      case LOCK -> lock(name);
      case LEASED_SEMAPHORE -> leasedPermits(name);
      default -> throw new IllegalArgumentException(type + " has no leases");
    };
  }

  String wakeups(ResourceType type, String name) {
    String resource =
        switch (type) {
          case LOCK -> lock(name);
          case SEMAPHORE -> semaphore(name);
          case LEASED_SEMAPHORE -> leasedSemaphore(name);
          case COUNT_DOWN_LATCH -> latch(name);
        };
    return resource + WAKEUPS;
  }

  /**
   * @param clientId a client id, or empty for the prefix that the revocation script completes
   * @return the channel of the revocation requests for that client's grants
   */
  String revocations(String clientId) {
    return prefix + REVOCATIONS + clientId;
  }

  /** The KEYS of the epoch script: the epoch record and its quarantine marker, in one slot. */
  String[] epochKeys() {
    String epoch = prefix + "quorum:{epoch}";
    return new String[] {epoch, epoch + ":quarantine"};
  }

  String presence(String clientId) {
    return prefix + CLIENT + clientId;
  }

  /**
   * @param key any key of a resource
   * @return the key whose write precedes a {@code WAIT} for the resource's grants: it carries the
   *     same hash tag, so that in a cluster it lives on the master that granted
   */
  String replicationBarrier(String key) {
    int open = key.indexOf('{');
    int close = open < 0 ? -1 : key.indexOf('}', open);
    if (close < 0) {
      throw new IllegalArgumentException("not a key of latchkey's, without a hash tag: " + key);
    }
    return prefix + "replication-barrier:" + key.substring(open, close + 1);
  }

  /** A SCAN pattern matching the holder hashes of all locks, and nothing else of ours. */
  String lockScanPattern() {
    return scanPattern(LOCK);
  }

  /** A SCAN pattern matching the counts of all semaphores, and nothing else of ours. */
  String semaphoreScanPattern() {
    return scanPattern(SEMAPHORE);
  }

  /**
   * A SCAN pattern matching the settings hashes of all leased semaphores (not their permits), and
   * nothing else of ours.
   */
  String leasedSemaphoreScanPattern() {
    return scanPattern(LEASED_SEMAPHORE);
  }

  /** A SCAN pattern matching the counts of all latches, and nothing else of ours. */
  String latchScanPattern() {
    return scanPattern(LATCH);
  }

  private String scanPattern(String kind) {
    return globEscape(prefix + kind) + "{*}";
  }

  String presenceScanPattern() {
    return globEscape(prefix + CLIENT) + "*";
  }

  /**
   * @param key a key found by {@link #lockScanPattern()}
   * @return the lock name whose holder hash this is, or empty if it is not one
   */
  Optional<String> lockName(String key) {
    return resourceName(LOCK, key);
  }

  /**
   * @param key a key found by {@link #semaphoreScanPattern()}
   * @return the semaphore name whose count this is, or empty if it is not one
   */
  Optional<String> semaphoreName(String key) {
    return resourceName(SEMAPHORE, key);
  }

  /**
   * @param key a key found by {@link #leasedSemaphoreScanPattern()}
   * @return the leased semaphore name whose settings hash this is, or empty if it is not one
   */
  Optional<String> leasedSemaphoreName(String key) {
    return resourceName(LEASED_SEMAPHORE, key);
  }

  /**
   * @param key a key found by {@link #latchScanPattern()}
   * @return the latch name whose count this is, or empty if it is not one
   */
  Optional<String> latchName(String key) {
    return resourceName(LATCH, key);
  }

  /** The name in the hash tag of a resource's main key {@code <prefix><kind>{<name>}}. */
  private Optional<String> resourceName(String kind, String key) {
    String start = prefix + kind + "{";
    if (!key.startsWith(start) || !key.endsWith("}")) {
      return Optional.empty();
    }
    String escaped = key.substring(start.length(), key.length() - 1);
    if (escaped.isEmpty() || escaped.indexOf('}') >= 0 || escaped.indexOf('{') >= 0) {
      return Optional.empty();
    }
    return unescape(escaped);
  }

  /**
   * @param key a key found by {@link #presenceScanPattern()}
   * @return the client id
   */
  String clientId(String key) {
    return key.substring(prefix.length() + CLIENT.length());
  }

  static String tag(String name) {
    StringBuilder tag = new StringBuilder(name.length() + 8).append('{');
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c == '%') {
        tag.append("%25");
      } else if (c == '{') {
        tag.append("%7B");
      } else if (c == '}') {
        tag.append("%7D");
      } else if (Character.isHighSurrogate(c)
          && i + 1 < name.length()
          && Character.isLowSurrogate(name.charAt(i + 1))) {
        tag.append(c).append(name.charAt(++i));
      } else if (Character.isSurrogate(c)) {
        tag.append("%u").append(String.format("%04X", (int) c));
      } else {
        tag.append(c);
      }
    }
    return tag.append('}').toString();
  }

  private static Optional<String> unescape(String escaped) {
    StringBuilder name = new StringBuilder(escaped.length());
    for (int i = 0; i < escaped.length(); i++) {
      char c = escaped.charAt(i);
      if (c != '%') {
        name.append(c);
        continue;
      }
      boolean unicode = i + 1 < escaped.length() && escaped.charAt(i + 1) == 'u';
      int start = unicode ? i + 2 : i + 1;
      int end = start + (unicode ? 4 : 2);
      if (end > escaped.length()) {
        return Optional.empty();
      }
      try {
        name.append((char) Integer.parseInt(escaped.substring(start, end), 16));
      } catch (NumberFormatException e) {
        return Optional.empty();
      }
      i = end - 1;
    }
    return Optional.of(name.toString());
  }

  private static String globEscape(String literal) {
    StringBuilder pattern = new StringBuilder(literal.length());
    for (int i = 0; i < literal.length(); i++) {
      char c = literal.charAt(i);
      if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
        pattern.append('\\');
      }
      pattern.append(c);
    }
    return pattern.toString();
  }
}
