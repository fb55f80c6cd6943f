package io.latchkey.jdbc;

import io.latchkey.HolderInfo;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
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

  private LockRecord(ResourceRow resource) {
    this.resource = resource;
  }

  static LockRecord load(Connection connection, Sql sql, ResourceRow resource) throws SQLException {
    LockRecord record = new LockRecord(resource);
    try (PreparedStatement select = connection.prepareStatement(sql.selectHolders)) {
      select.setString(1, resource.key);
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          Holder holder = new Holder(rs.getString(2), rs.getLong(6), false);
          holder.shared = rs.getInt(3);
          holder.exclusive = rs.getInt(4);
          holder.expiresAt = rs.getLong(5);
          holder.changed = false;
          record.holders.put(rs.getString(1), holder);
        }
      }
    }
    try (PreparedStatement select = connection.prepareStatement(sql.selectQueue)) {
      select.setString(1, resource.key);
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          QueuePlace place =
              new QueuePlace(
                  "S".equals(rs.getString(2)) ? LockMode.SHARED : LockMode.EXCLUSIVE,
                  rs.getLong(3),
                  false);
          record.queue.put(rs.getString(1), place);
        }
      }
    }
    return record;
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
    String key = resource.key;
    if (!removedHolders.isEmpty()) {
      try (PreparedStatement delete = connection.prepareStatement(sql.deleteHolder)) {
        for (String owner : removedHolders) {
          delete.setString(1, key);
          delete.setString(2, ResourceKeys.holder(owner));
          delete.addBatch();
        }
        delete.executeBatch();
      }
    }
    for (Map.Entry<String, Holder> entry : holders.entrySet()) {
      Holder holder = entry.getValue();
      if (holder.inserted) {
        try (PreparedStatement insert = connection.prepareStatement(sql.insertHolder)) {
          insert.setString(1, key);
          insert.setString(2, ResourceKeys.holder(entry.getKey()));
          insert.setString(3, entry.getKey());
          insert.setString(4, holder.clientId);
          insert.setInt(5, holder.shared);
          insert.setInt(6, holder.exclusive);
          insert.setLong(7, holder.expiresAt);
          insert.setLong(8, holder.token);
          insert.executeUpdate();
        }
      } else if (holder.changed) {
        try (PreparedStatement update = connection.prepareStatement(sql.updateHolder)) {
          update.setInt(1, holder.shared);
          update.setInt(2, holder.exclusive);
          update.setLong(3, holder.expiresAt);
          update.setString(4, key);
          update.setString(5, ResourceKeys.holder(entry.getKey()));
          update.executeUpdate();
        }
      }
    }
    if (!removedQueue.isEmpty()) {
      try (PreparedStatement delete = connection.prepareStatement(sql.deleteQueue)) {
        for (String owner : removedQueue) {
          delete.setString(1, key);
          delete.setString(2, ResourceKeys.holder(owner));
          delete.addBatch();
        }
        delete.executeBatch();
      }
    }
    for (Map.Entry<String, QueuePlace> entry : queue.entrySet()) {
      QueuePlace place = entry.getValue();
      String mode = place.mode == LockMode.SHARED ? "S" : "X";
      if (place.inserted) {
        try (PreparedStatement insert = connection.prepareStatement(sql.insertQueue)) {
          insert.setString(1, key);
          insert.setString(2, ResourceKeys.holder(entry.getKey()));
          insert.setString(3, entry.getKey());
          insert.setString(4, mode);
          insert.setLong(5, place.deadline);
          insert.setLong(6, ++resource.queueSeq);
          insert.executeUpdate();
        }
      } else if (place.changed) {
        try (PreparedStatement update = connection.prepareStatement(sql.updateQueue)) {
          update.setString(1, mode);
          update.setLong(2, place.deadline);
          update.setString(3, key);
          update.setString(4, ResourceKeys.holder(entry.getKey()));
          update.executeUpdate();
        }
      }
    }
    resource.save(connection, sql);
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
