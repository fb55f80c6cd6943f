package io.latchkey.zookeeper;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One child of a lock's directory, as its name tells: the owner's digest (null for a foreign node,
 * such as one of Curator's recipes), whether it was created for the exclusive side, and its
 * sequence number, which orders the queue.
 *
 * @param name the child's name
 * @param ownerDigest the digest of its owner, or null if the node is not latchkey's
 * @param createdExclusive whether it was created for the exclusive side (a foreign node is, unless
 *     it carries Curator's read marker)
 * @param sequence its sequence number
 */
record LockNode(
    String name, @Nullable String ownerDigest, boolean createdExclusive, long sequence) {
  private static final int SEQUENCE_DIGITS = 10;

  /** Orders nodes by sequence: the queue order. */
  static final Comparator<LockNode> QUEUE_ORDER = Comparator.comparingLong(LockNode::sequence);

  /**
   * @param children the names of a lock directory's children
   * @return the sequential ones, in queue order (the fence record is none)
   */
  static List<LockNode> sorted(List<String> children) {
    List<LockNode> nodes = new ArrayList<>(children.size());
    for (String child : children) {
      LockNode node = parse(child);
      if (node != null) {
        nodes.add(node);
      }
    }
    nodes.sort(QUEUE_ORDER);
    return nodes;
  }

  private static @Nullable LockNode parse(String child) {
    if (child.length() < SEQUENCE_DIGITS || child.startsWith(ZooKeeperPaths.FENCE_PREFIX)) {
      return null;
    }
    long sequence;
    try {
      sequence = Long.parseLong(child.substring(child.length() - SEQUENCE_DIGITS));
    } catch (NumberFormatException notSequential) {
      return null;
    }
    if (child.startsWith(ZooKeeperPaths.LOCK_NODE_PREFIX)) {
      int dash = child.indexOf('-', ZooKeeperPaths.LOCK_NODE_PREFIX.length());
      if (dash > 0) {
        String digest = child.substring(ZooKeeperPaths.LOCK_NODE_PREFIX.length(), dash);
        boolean exclusive = child.startsWith(ZooKeeperPaths.WRITE_MARKER, dash + 1);
        return new LockNode(child, digest, exclusive, sequence);
      }
    }
    return new LockNode(child, null, !child.contains(ZooKeeperPaths.READ_MARKER), sequence);
  }

  /**
   * @return whether latchkey made this node (it has data latchkey can read)
   */
  boolean isLatchkeys() {
    return ownerDigest != null;
  }
}
