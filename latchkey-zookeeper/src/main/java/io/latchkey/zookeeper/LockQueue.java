package io.latchkey.zookeeper;

import java.util.ArrayList;
import java.util.List;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * A lock directory read whole: every node in queue order with its data, and which of them hold the
 * lock. The rule, the same as {@link ZooKeeperLockStore}'s for one node: a node that holds or asks
 * for the exclusive side holds the lock if it is first; any other node holds it if no node ahead of
 * it holds or asks for the exclusive side (a queued writer blocks the readers behind it). A node at
 * the front whose owner has not come for it yet still waits. A foreign node (one of Curator's
 * recipes) counts as exclusive unless it carries Curator's read marker.
 *
 * @param entries the nodes in queue order
 * @param fence the lock's fence record, {@link LockFence#NONE} if it has none
 * @param base the base of the tokens ({@link TokenBase}) of the data the directory was read from
 */
record LockQueue(List<Entry> entries, LockFence fence, long base) {
  /**
   * One node.
   *
   * @param node its name, as parsed
   * @param path its path
   * @param data its data, or null for a foreign node
   * @param stat its stat
   * @param holding whether it holds the lock (else it waits)
   */
  record Entry(
      LockNode node, String path, @Nullable LockNodeData data, Stat stat, boolean holding) {
    /**
     * @return the node's token: its creation zxid plus its offset, without the base
     */
    long nodeToken() {
      return data == null ? stat.getCzxid() : data.token(stat.getCzxid());
    }
  }

  /**
   * @param entry one of this queue's nodes
   * @return the fencing token of a grant on it
   */
  long fencingToken(Entry entry) {
    return base + entry.nodeToken();
  }

  /** A node read from the directory, before the rule is applied. */
  record Read(LockNode node, String path, @Nullable LockNodeData data, Stat stat) {
    boolean blocksReaders() {
      return data == null ? node.createdExclusive() : data.blocksReaders();
    }
  }

  /**
   * @param reads the nodes in queue order
   * @param fence the lock's fence record
   * @param base the base of the tokens
   * @return the queue with the rule applied
   */
  static LockQueue of(List<Read> reads, LockFence fence, long base) {
    List<Entry> entries = new ArrayList<>(reads.size());
    boolean writerAhead = false;
    for (int i = 0; i < reads.size(); i++) {
      Read read = reads.get(i);
      boolean exclusive = read.blocksReaders();
      boolean atFront = exclusive ? i == 0 : !writerAhead;
      LockNodeData data = read.data();
      boolean holding = atFront && (data == null || !data.waiting());
      writerAhead |= exclusive;
      entries.add(new Entry(read.node(), read.path(), read.data(), read.stat(), holding));
    }
    return new LockQueue(entries, fence, base);
  }

  List<Entry> holders() {
    return entries.stream().filter(Entry::holding).toList();
  }

  int waiting() {
    return (int) entries.stream().filter(entry -> !entry.holding()).count();
  }
}
