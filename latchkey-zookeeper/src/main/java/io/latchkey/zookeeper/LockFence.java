package io.latchkey.zookeeper;

import java.util.List;

/**
 * A lock's fence record: what a quorum (docs/adr/0009-quorum-fencing.md) raised the lock's fencing
 * counter to, kept as a persistent child of the lock's directory whose name carries it, {@code
 * fence-{offset}-{raised}}. The name, not the data: every acquire lists the directory anyway, so it
 * reads the record at no cost, and a lock that was never raised has none and pays nothing.
 *
 * <p>A grant's token is the base of the data ({@link TokenBase}) plus its node's creation zxid plus
 * the offset written in the node's data ({@link LockNodeData#offset()}), which its owner's attempt
 * sets to this record's offset before it takes the grant, from the listing that found the node at
 * the front. The record's offset is raised only (to the raised value minus the base and a zxid the
 * directory had reached, so that every later node's token is above the raised value), and grants
 * are made in node order, which is zxid order: so tokens keep growing. The record also keeps the
 * raised value itself, which is the lock's counter when no holder has a larger token ({@link
 * ZooKeeperFenceStore}).
 *
 * @param offset added to the creation zxid of a node granted under this record
 * @param raised the value the counter was last raised to
 */
record LockFence(long offset, long raised) {
  /** No record: the lock was never raised. */
  static final LockFence NONE = new LockFence(0, 0);

  /**
   * @param children the names of a lock directory's children
   * @return its fence record, or {@link #NONE} (raises replace the one record in a multi-op; were
   *     there two, the larger values would count)
   */
  static LockFence of(List<String> children) {
    LockFence fence = NONE;
    for (String child : children) {
      if (!child.startsWith(ZooKeeperPaths.FENCE_PREFIX)) {
        continue;
      }
      String[] parts = child.substring(ZooKeeperPaths.FENCE_PREFIX.length()).split("-", -1);
      try {
        if (parts.length == 2) {
          fence =
              new LockFence(
                  Math.max(fence.offset, Long.parseLong(parts[0])),
                  Math.max(fence.raised, Long.parseLong(parts[1])));
        }
      } catch (NumberFormatException notOurs) {
        // Not a record latchkey wrote: it raises nothing.
      }
    }
    return fence;
  }

  /**
   * @return the record's node name
   */
  String name() {
    return ZooKeeperPaths.FENCE_PREFIX + offset + "-" + raised;
  }
}
