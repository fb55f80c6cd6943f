package io.latchkey.zookeeper;

import java.util.Map;

/**
 * The data of a latchkey lock node: who made it and how many holds its owner has (or asks for,
 * while the node waits in the queue) in each mode, as {@link NodeFields}.
 *
 * @param owner the owner id
 * @param clientId the client that created the node
 * @param host the host of that client
 * @param pid its process id
 * @param exclusive exclusive holds (or 1 asked for, while queued)
 * @param shared shared holds (or 1 asked for, while queued)
 * @param sessionTimeoutMillis the session timeout of the creating client: how long the node
 *     outlives its client at most
 * @param waiting whether the node is a queue place whose owner has not taken the grant yet (it may
 *     be at the front already: a woken waiter that has not come); the owner's attempt that finds it
 *     at the front clears this, and only then is it a grant
 * @param creation a random id of the attempt that created the node: a create whose answer was lost
 *     with the connection is recognised by it ("" in nodes of older versions)
 * @param offset added to the node's creation zxid to make its fencing token: the offset of the
 *     lock's {@link LockFence} that its grant was made under (0, and not written, while the lock
 *     was never raised)
 */
record LockNodeData(
    String owner,
    String clientId,
    String host,
    long pid,
    int exclusive,
    int shared,
    long sessionTimeoutMillis,
    boolean waiting,
    String creation,
    long offset) {

  /**
   * @param exclusiveSide the mode
   * @return the holds in that mode
   */
  int holds(boolean exclusiveSide) {
    return exclusiveSide ? exclusive : shared;
  }

  /**
   * @param exclusiveSide the mode
   * @param delta the change
   * @return this data with the holds of that mode changed
   */
  LockNodeData plus(boolean exclusiveSide, int delta) {
    return exclusiveSide
        ? with(exclusive + delta, shared, waiting, offset)
        : with(exclusive, shared + delta, waiting, offset);
  }

  /**
   * @param waits whether the node waits
   * @return this data, waiting or holding
   */
  LockNodeData withWaiting(boolean waits) {
    return with(exclusive, shared, waits, offset);
  }

  /**
   * @param fence the lock's fence record
   * @return this data with the fence's offset. While the data lives, a node's offset is never above
   *     the record's (records are only raised, and a node takes the offset of one it saw); one
   *     above it was taken from a record of another life of the data (a server restarted empty
   *     since), and is lowered so that it cannot put the node's token above those of later nodes
   */
  LockNodeData under(LockFence fence) {
    return fence.offset() == offset ? this : with(exclusive, shared, waiting, fence.offset());
  }

  private LockNodeData with(int exclusiveHolds, int sharedHolds, boolean waits, long newOffset) {
    return new LockNodeData(
        owner,
        clientId,
        host,
        pid,
        exclusiveHolds,
        sharedHolds,
        sessionTimeoutMillis,
        waits,
        creation,
        newOffset);
  }

  /**
   * @param czxid the node's creation zxid
   * @return the fencing token of a grant on the node
   */
  long token(long czxid) {
    return czxid + offset;
  }

  /**
   * @return whether the node holds (or asks for) the exclusive side, which blocks readers behind it
   */
  boolean blocksReaders() {
    return exclusive > 0;
  }

  byte[] encode() {
    NodeFields.Writer fields =
        new NodeFields.Writer()
            .field("owner", owner)
            .field("client", clientId)
            .field("host", host)
            .field("pid", pid)
            .field("exclusive", exclusive)
            .field("shared", shared)
            .field("sessionTimeoutMs", sessionTimeoutMillis)
            .field("waiting", waiting ? 1 : 0)
            .field("creation", creation);
    if (offset != 0) {
      fields.field("offset", offset);
    }
    return fields.bytes();
  }

  /**
   * @param data a node's data
   * @return the record
   * @throws IllegalArgumentException if it is not a latchkey lock node's data
   */
  static LockNodeData decode(byte[] data) {
    Map<String, String> fields = NodeFields.decode(data);
    try {
      return new LockNodeData(
          required(fields, "owner"),
          required(fields, "client"),
          fields.getOrDefault("host", ""),
          Long.parseLong(fields.getOrDefault("pid", "0")),
          Integer.parseInt(required(fields, "exclusive")),
          Integer.parseInt(required(fields, "shared")),
          Long.parseLong(fields.getOrDefault("sessionTimeoutMs", "0")),
          "1".equals(fields.get("waiting")),
          fields.getOrDefault("creation", ""),
          Long.parseLong(fields.getOrDefault("offset", "0")));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a latchkey lock node: " + e.getMessage(), e);
    }
  }

  private static String required(Map<String, String> fields, String key) {
    String value = fields.get(key);
    if (value == null) {
      throw new IllegalArgumentException("not a latchkey lock node: no " + key);
    }
    return value;
  }
}
