package io.latchkey.zookeeper;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * Where a lock's nodes live and how they are named. The default, {@link #LATCHKEY}, keeps every
 * lock under the namespace's {@code locks} node. The two Curator layouts put a lock at the path its
 * name spells (under the namespace) and name latchkey's nodes so that Curator's recipe on that path
 * sorts and counts them, so that latchkey and Curator clients exclude each other on one lock while
 * a fleet moves from one to the other (docs/backends/zookeeper.md, "Mixed fleets with Curator").
 *
 * <p>In both directions the rule is ZooKeeper's order of creation: latchkey counts a Curator node
 * as a holder (or waiter) with an unknown owner, exclusive unless its name carries Curator's read
 * marker {@code __READ__}; Curator counts latchkey's nodes by their sequence as it counts its own.
 * Fencing tokens, re-entry and inspection work for latchkey's own grants as in the default layout.
 */
public enum LockLayout {
  /**
   * latchkey's own: {@code /locks/{name as one percent-encoded segment}/lk-{owner digest}-
   * {__WRIT__|__READ__}{sequence}}. Curator recipes do not use these paths.
   */
  LATCHKEY("latchkey"),

  /**
   * Beside Curator's {@code InterProcessMutex} on the same path: the lock name is the path,
   * relative to the namespace ({@code orders/42} is {@code /{namespace}/orders/42}); latchkey's
   * nodes end in {@code lock-{sequence}}, the name Curator's mutex sorts by. Every latchkey lock,
   * mutex, fair lock and read-write lock on such a path excludes the mutex's holders; a latchkey
   * read lock counts as exclusive to Curator.
   */
  CURATOR_MUTEX("curator-mutex"),

  /**
   * Beside Curator's {@code InterProcessReadWriteLock} on the same path: the lock name is the path,
   * relative to the namespace; latchkey's nodes end in {@code __WRIT__{sequence}} or {@code
   * __READ__{sequence}}, as Curator's own: Curator's readers enter beside latchkey's readers and
   * wait for latchkey's writers, and the other way round. A latchkey lock or mutex on such a path
   * takes the write side.
   */
  CURATOR_READ_WRITE_LOCK("curator-rwlock"),

  /**
   * Beside Curator's {@code InterProcessSemaphoreMutex} (a semaphore of one lease) on the same
   * path: the lock name is the path, relative to the namespace. Curator's semaphore queues for a
   * mutex at {@code {path}/locks}, creates a lease node in {@code {path}/leases}, waits until it is
   * the only lease, and then leaves the mutex; its lease is its hold. latchkey queues in {@code
   * {path}/locks} as Curator's mutex does ({@link #CURATOR_MUTEX}'s names) and holds the lock when
   * it is at the front of that queue and no lease is left; it keeps its place at the front while it
   * holds, so no Curator client can take a lease meanwhile.
   */
  CURATOR_SEMAPHORE_MUTEX("curator-semaphore-mutex");

  private static final String SEMAPHORE_LOCKS = "/locks";
  private static final String SEMAPHORE_LEASES = "/leases";

  /** The sequence suffix Curator's {@code InterProcessMutex} sorts its nodes by. */
  static final String CURATOR_MUTEX_NAME = "lock-";

  private final String option;

  LockLayout(String option) {
    this.option = option;
  }

  /**
   * @return the value of the {@code layout} URI option that selects this layout
   */
  public String option() {
    return option;
  }

  /**
   * @param value a {@code layout} option's value
   * @return the layout
   * @throws IllegalArgumentException naming the known values
   */
  static LockLayout ofOption(String value) {
    for (LockLayout layout : values()) {
      if (layout.option.equals(value.toLowerCase(Locale.ROOT))) {
        return layout;
      }
    }
    throw new IllegalArgumentException(
        "unknown layout '"
            + value
            + "'; known layouts: "
            + Arrays.stream(values()).map(LockLayout::option).collect(Collectors.joining(", ")));
  }

  /**
   * @param name a lock name
   * @return the lock's directory, relative to the namespace
   * @throws IllegalArgumentException if a Curator layout's name is not a path of non-empty segments
   */
  String dir(String name) {
    if (this == LATCHKEY) {
      return ZooKeeperPaths.lockDir(name);
    }
    String path = name.startsWith("/") ? name.substring(1) : name;
    StringBuilder dir = new StringBuilder(path.length() + 1);
    for (String segment : path.split("/", -1)) {
      if (segment.isEmpty()) {
        throw new IllegalArgumentException(
            "with layout "
                + option
                + " a lock name is a path like 'orders/42' (no empty segment), was '"
                + name
                + "'");
      }
      dir.append('/').append(ZooKeeperPaths.segment(segment));
    }
    return this == CURATOR_SEMAPHORE_MUTEX ? dir + SEMAPHORE_LOCKS : dir.toString();
  }

  /**
   * @param dir a lock's directory
   * @return the directory of the Curator semaphore's leases that must be empty for latchkey to hold
   *     the lock, or null if the layout has none
   */
  @Nullable String leases(String dir) {
    return this == CURATOR_SEMAPHORE_MUTEX
        ? dir.substring(0, dir.length() - SEMAPHORE_LOCKS.length()) + SEMAPHORE_LEASES
        : null;
  }

  /**
   * @param digest the owner's digest
   * @param exclusive the mode the node is created for
   * @return the name prefix of a new sequential lock node (ZooKeeper appends the sequence)
   */
  String nodePrefix(String digest, boolean exclusive) {
    String prefix = ZooKeeperPaths.lockNodePrefix(digest, exclusive);
    return this == CURATOR_READ_WRITE_LOCK || this == LATCHKEY
        ? prefix
        : prefix + "-" + CURATOR_MUTEX_NAME;
  }

  /**
   * @return whether the locks can be listed (only the default layout keeps them under one node)
   */
  boolean listable() {
    return this == LATCHKEY;
  }
}
