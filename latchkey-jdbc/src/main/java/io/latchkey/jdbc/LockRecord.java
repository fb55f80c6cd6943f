package io.latchkey.jdbc;

import io.latchkey.HolderInfo;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.spi.ResourceType;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A lock name's record, loaded inside the transaction that holds its resource row's lock: the
 * holder rows (in token order) and the wait-queue rows (in arrival order). The operation changes it
 * in memory by the rules of {@link io.latchkey.spi.LockRequest}; {@link #save} then writes exactly
 * the rows that changed.
 */
final class LockRecord {
  final ResourceRow resource;
  final Map<String, Holder> holders = new LinkedHashMap<>();
  final Map<String, QueuePlace> queue = new LinkedHashMap<>();
  private final Set<String> removedHolders = new HashSet<>();
  private final Set<String> removedQueue = new HashSet<>();

  /**
   * A record of the resource row's lock; a sole holder the row carries ({@link SoleHolder}) becomes
   * a holder row, written by {@link #save} in the same transaction.
   */
  private LockRecord(ResourceRow resource) {
    this.resource = resource;
    SoleHolder sole = resource.takeSole();
    if (sole != null) {
      Holder holder = new Holder(sole.clientId(), sole.token(), true);
      if (sole.mode() == LockMode.SHARED) {
        holder.shared = 1;
      } else {
        holder.exclusive = 1;
      }
      holder.expiresAt = sole.expiresAt();
      holders.put(sole.holderId(), holder);
    }
  }

  static LockRecord load(Connection connection, Sql sql, ResourceRow resource) throws SQLException {
    LockRecord record = new LockRecord(resource);
    try (PreparedStatement select = connection.prepareStatement(sql.selectHolders)) {
      select.setString(1, resource.key);
      try (ResultSet rs = select.executeQuery()) {
        record.readHolders(rs);
      }
    }
    try (PreparedStatement select = connection.prepareStatement(sql.selectQueue)) {
      select.setString(1, resource.key);
      try (ResultSet rs = select.executeQuery()) {
        record.readQueue(rs);
      }
    }
    return record;
  }

  /**
   * Locks the lock's resource row until the transaction ends (creating it first if asked) and loads
   * the record: in one round trip where the driver sends texts of several statements ({@link
   * Sql#lockAndLoad}), elsewhere with {@link ResourceRow#lock} and {@link #load}.
   *
   * @return the record, or null if the resource row does not exist and {@code create} is false
   */
  static @Nullable LockRecord lockAndLoad(
      Connection connection, Sql sql, String name, boolean create) throws SQLException {
    if (sql.lockAndLoad != null) {
      String key = ResourceKeys.resource(ResourceType.LOCK, name);
      try (PreparedStatement select = connection.prepareStatement(sql.lockAndLoad)) {
        select.setString(1, key);
        select.setString(2, key);
        select.setString(3, key);
        select.execute();
        ResourceRow row;
        try (ResultSet rs = select.getResultSet()) {
          row = ResourceRow.read(rs, key, name, sql);
        }
        if (row != null) {
          LockRecord record = new LockRecord(row);
          if (!select.getMoreResults()) {
            throw new IllegalStateException("the read of a lock's rows answered no holders");
          }
          try (ResultSet rs = select.getResultSet()) {
            while (rs.next()) {
              if ("H".equals(rs.getString(1))) {
                record.readHolder(rs, 1);
              } else {
                record.readPlace(rs, 2, 3, 6);
              }
            }
          }
          return record;
        }
      }
      // A name's first use: the row is created (or found, after a retry) the long way.
    }
    ResourceRow row = ResourceRow.lock(connection, sql, ResourceType.LOCK, name, create);
    return row == null ? null : load(connection, sql, row);
  }

  private void readHolders(ResultSet rs) throws SQLException {
    while (rs.next()) {
      readHolder(rs, 0);
    }
  }

  /**
   * Reads a holder from the six columns after {@code skip}, as {@link Sql#selectHolders} has them.
   */
  private void readHolder(ResultSet rs, int skip) throws SQLException {
    Holder holder = new Holder(rs.getString(skip + 2), rs.getLong(skip + 6), false);
    holder.shared = rs.getInt(skip + 3);
    holder.exclusive = rs.getInt(skip + 4);
    holder.expiresAt = rs.getLong(skip + 5);
    holder.changed = false;
    holders.put(rs.getString(skip + 1), holder);
  }

  private void readQueue(ResultSet rs) throws SQLException {
    while (rs.next()) {
      readPlace(rs, 1, 2, 3);
    }
  }

  /** Reads a queue place: owner, mode and deadline from the columns given. */
  private void readPlace(ResultSet rs, int owner, int mode, int deadline) throws SQLException {
    QueuePlace place = new QueuePlace(modeOf(rs.getString(mode)), rs.getLong(deadline), false);
    queue.put(rs.getString(owner), place);
  }

  long now() {
    return resource.now;
  }

  /** Drops holders and queue places whose time has passed. */
  void purge() {
    long now = now();
    dropHolders(holder -> holder.expiresAt <= now);
    purgeQueue();
  }

  /** Drops the queue places whose time has passed (holders are left alone). */
  void purgeQueue() {
    long now = now();
    queue.entrySet().removeIf(e -> e.getValue().deadline <= now && removedQueue.add(e.getKey()));
  }

  /** Drops the holders that {@code gone} says are gone. */
  void dropHolders(java.util.function.Predicate<Holder> gone) {
    holders.entrySet().removeIf(e -> gone.test(e.getValue()) && removedHolders.add(e.getKey()));
  }

  /** Adds a new holder with the name's next fencing token (an expired row is deleted first). */
  Holder addHolder(String owner, String clientId) {
    Holder holder = new Holder(clientId, resource.nextToken(), true);
    holders.put(owner, holder);
    return holder;
  }

  void removeHolder(String owner) {
    if (holders.remove(owner) != null) {
      removedHolders.add(owner);
    }
  }

  void clearHolders() {
    removedHolders.addAll(holders.keySet());
    holders.clear();
  }

  /** Queues the owner at the tail, or moves the deadline of its place, keeping its turn. */
  void enqueue(String owner, LockMode mode, long deadline) {
    QueuePlace place = queue.get(owner);
    if (place == null) {
      queue.put(owner, new QueuePlace(mode, deadline, true));
    } else {
      place.mode = mode;
      place.deadline = deadline;
      place.changed = true;
    }
  }

  boolean dequeue(String owner) {
    if (queue.remove(owner) != null) {
      removedQueue.add(owner);
      return true;
    }
    return false;
  }

  @Nullable String queueHead() {
    Iterator<String> it = queue.keySet().iterator();
    return it.hasNext() ? it.next() : null;
  }

  @Nullable LockMode queuedMode(String owner) {
    QueuePlace place = queue.get(owner);
    return place == null ? null : place.mode;
  }

  boolean exclusiveHeld() {
    return holders.values().stream().anyMatch(h -> h.exclusive > 0);
  }

  /**
   * How long until the place of the first writer queued ahead of this owner (anywhere in the queue,
   * if the owner is not queued) ends, or -1 if no writer is ahead. Call after purge.
   */
  long writerAheadPlaceEnds(String owner) {
    for (Map.Entry<String, QueuePlace> entry : queue.entrySet()) {
      if (entry.getKey().equals(owner)) {
        return -1;
      }
      if (entry.getValue().mode == LockMode.EXCLUSIVE) {
        return entry.getValue().deadline - now();
      }
    }
    return -1;
  }

  LockInfo info() {
    List<HolderInfo> infos = new ArrayList<>();
    for (Map.Entry<String, Holder> entry : holders.entrySet()) {
      Holder holder = entry.getValue();
      Duration left = Duration.ofMillis(Math.max(0, holder.expiresAt - now()));
      if (holder.exclusive > 0) {
        infos.add(
            new HolderInfo(
                entry.getKey(),
                holder.clientId,
                LockMode.EXCLUSIVE,
                holder.exclusive,
                left,
                holder.token));
      }
      if (holder.shared > 0) {
        infos.add(
            new HolderInfo(
                entry.getKey(),
                holder.clientId,
                LockMode.SHARED,
                holder.shared,
                left,
                holder.token));
      }
    }
    return new LockInfo(resource.name, infos, queue.size());
  }

  /** Writes the rows that changed, and the resource row. */
  void save(Connection connection, Sql sql) throws SQLException {
    writes(sql).run(connection);
  }

  /**
   * The writes of the rows that changed and of the resource row, not yet run: the caller may add
   * statements and then runs them.
   */
  Writes writes(Sql sql) {
    Writes writes = sql.writes();
    String key = resource.key;
    for (String owner : removedHolders) {
      writes.add(sql.deleteHolder, key, ResourceKeys.holder(owner));
    }
    for (Map.Entry<String, Holder> entry : holders.entrySet()) {
      Holder holder = entry.getValue();
      String holderKey = ResourceKeys.holder(entry.getKey());
      if (holder.inserted) {
        writes.add(
            sql.insertHolder,
            key,
            holderKey,
            entry.getKey(),
            holder.clientId,
            holder.shared,
            holder.exclusive,
            holder.expiresAt,
            holder.token);
      } else if (holder.changed) {
        writes.add(
            sql.updateHolder, holder.shared, holder.exclusive, holder.expiresAt, key, holderKey);
      }
    }
    for (String owner : removedQueue) {
      writes.add(sql.deleteQueue, key, ResourceKeys.holder(owner));
    }
    for (Map.Entry<String, QueuePlace> entry : queue.entrySet()) {
      QueuePlace place = entry.getValue();
      String mode = codeOf(place.mode);
      String holderKey = ResourceKeys.holder(entry.getKey());
      if (place.inserted) {
        writes.add(
            sql.insertQueue,
            key,
            holderKey,
            entry.getKey(),
            mode,
            place.deadline,
            ++resource.queueSeq);
      } else if (place.changed) {
        writes.add(sql.updateQueue, mode, place.deadline, key, holderKey);
      }
    }
    resource.hasRows = !holders.isEmpty() || !queue.isEmpty();
    resource.write(writes, sql);
    return writes;
  }

  /** The one-letter code of a mode in the tables: S or X. */
  static String codeOf(LockMode mode) {
    return mode == LockMode.SHARED ? "S" : "X";
  }

  /** The mode of a one-letter code ({@link #codeOf}). */
  static LockMode modeOf(String code) {
    return "S".equals(code) ? LockMode.SHARED : LockMode.EXCLUSIVE;
  }

  /** One owner's holds on the lock. */
  static final class Holder {
    final String clientId;
    final long token;
    final boolean inserted;
    int shared;
    int exclusive;
    long expiresAt;
    boolean changed;

    Holder(String clientId, long token, boolean inserted) {
      this.clientId = clientId;
      this.token = token;
      this.inserted = inserted;
    }

    void extendTo(long deadline) {
      if (deadline > expiresAt) {
        expiresAt = deadline;
        changed = true;
      }
    }

    int take(LockMode mode) {
      changed = true;
      return mode == LockMode.SHARED ? ++shared : ++exclusive;
    }

    int give(LockMode mode) {
      changed = true;
      return mode == LockMode.SHARED ? --shared : --exclusive;
    }

    int holds(LockMode mode) {
      return mode == LockMode.SHARED ? shared : exclusive;
    }
  }

  /** A waiter's place: the mode it waits for, and when the place ends. */
  static final class QueuePlace {
    final boolean inserted;
    LockMode mode;
    long deadline;
    boolean changed;

    QueuePlace(LockMode mode, long deadline, boolean inserted) {
      this.mode = mode;
      this.deadline = deadline;
      this.inserted = inserted;
    }
  }
}
