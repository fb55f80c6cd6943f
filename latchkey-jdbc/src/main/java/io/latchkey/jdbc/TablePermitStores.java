package io.latchkey.jdbc;

import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.LatchStore;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.SemaphoreStore;
import io.latchkey.spi.Wakeup;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Semaphores, leased semaphores and count-down latches in the lease table. Each keeps its number in
 * its resource row's {@code amount} (NULL: not set): a semaphore its free permits, a leased
 * semaphore its total, a latch its count. A leased semaphore's granted permits are holder rows with
 * a lease and a token from the row's fencing counter, renewed with the lock holders.
 */
final class TablePermitStores {
  private final Transactions transactions;
  private final Sql sql;
  private final WakeupPublisher wakeups;
  private final String clientId;

  TablePermitStores(Transactions transactions, Sql sql, WakeupPublisher wakeups, String clientId) {
    this.transactions = transactions;
    this.sql = sql;
    this.wakeups = wakeups;
    this.clientId = clientId;
  }

  SemaphoreStore semaphores() {
    return semaphores;
  }

  LeasedSemaphoreStore leasedSemaphores() {
    return leased;
  }

  LatchStore latches() {
    return latches;
  }

  private ResourceRow lockRow(Connection c, ResourceType type, String name) throws SQLException {
    return TableLockStore.requireRow(ResourceRow.lock(c, sql, type, name, true));
  }

  private @Nullable Long readAmount(Connection c, ResourceType type, String name)
      throws SQLException {
    try (PreparedStatement select = c.prepareStatement(sql.selectResource)) {
      select.setString(1, ResourceKeys.resource(type, name));
      try (ResultSet rs = select.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        long amount = rs.getLong(1);
        return rs.wasNull() ? null : amount;
      }
    }
  }

  /**
   * The count after adding {@code delta}, checked before anything changes.
   *
   * @throws IllegalArgumentException if it would leave the range of an int
   */
  private static long countAfter(String kind, String name, long count, int delta) {
    long after = count + delta;
    if (after != (int) after) {
      throw new IllegalArgumentException(
          "adding "
              + delta
              + " permits to the "
              + count
              + " of "
              + kind
              + " '"
              + name
              + "' would take its count out of the range of an int ["
              + Integer.MIN_VALUE
              + ", "
              + Integer.MAX_VALUE
              + "]; nothing was changed");
    }
    return after;
  }

  /** Sets a counting resource's number if it is not set yet. */
  private CompletionStage<Boolean> setIfUnset(
      ResourceType type, String kind, String name, int permits) {
    return transactions.submit(
        "setting the permits of " + kind + " '" + name + "'",
        c -> {
          ResourceRow row = lockRow(c, type, name);
          if (row.amount != null) {
            return false;
          }
          row.amount = (long) permits;
          row.save(c, sql);
          return true;
        });
  }

  /** Adds to a counting resource's number, waking as many waiters when it grows. */
  private CompletionStage<Void> add(ResourceType type, String kind, String name, int delta) {
    return transactions.execute(
        "adding permits to " + kind + " '" + name + "'",
        c -> {
          ResourceRow row = lockRow(c, type, name);
          long before = row.amount == null ? 0 : row.amount;
          row.amount = countAfter(kind, name, before, delta);
          row.save(c, sql);
          if (delta > 0) {
            wakeups.publish(c, row.key, Wakeup.of(delta));
          }
        });
  }

  private final SemaphoreStore semaphores =
      new SemaphoreStore() {
        @Override
        public CompletionStage<Boolean> trySetPermits(String name, int permits) {
          return setIfUnset(ResourceType.SEMAPHORE, "semaphore", name, permits);
        }

        @Override
        public CompletionStage<Void> addPermits(String name, int delta) {
          return add(ResourceType.SEMAPHORE, "semaphore", name, delta);
        }

        @Override
        public CompletionStage<Boolean> tryAcquire(String name, int permits) {
          return transactions.submit(
              "acquire of semaphore '" + name + "'",
              c -> {
                ResourceRow row = lockRow(c, ResourceType.SEMAPHORE, name);
                long available = row.amount == null ? 0 : row.amount;
                if (available < permits) {
                  return false;
                }
                row.amount = available - permits;
                row.save(c, sql);
                return true;
              });
        }

        @Override
        public CompletionStage<Integer> availablePermits(String name) {
          return transactions.submit(
              "reading semaphore '" + name + "'",
              c -> {
                Long amount = readAmount(c, ResourceType.SEMAPHORE, name);
                return amount == null ? 0 : amount.intValue();
              });
        }
      };

  private final LeasedSemaphoreStore leased =
      new LeasedSemaphoreStore() {
        @Override
        public CompletionStage<Boolean> trySetPermits(String name, int permits) {
          return setIfUnset(ResourceType.LEASED_SEMAPHORE, "leased semaphore", name, permits);
        }

        @Override
        public CompletionStage<Void> addPermits(String name, int delta) {
          return add(ResourceType.LEASED_SEMAPHORE, "leased semaphore", name, delta);
        }

        @Override
        public CompletionStage<AcquireResult> tryAcquire(
            String name, String permitId, long leaseMillis) {
          return transactions.submit(
              "acquire of leased semaphore '" + name + "'",
              c -> acquirePermit(c, name, permitId, leaseMillis));
        }

        @Override
        public CompletionStage<Boolean> release(String name, String permitId) {
          return transactions.submit(
              "release of a permit of leased semaphore '" + name + "'",
              c -> {
                ResourceRow row =
                    ResourceRow.lock(c, sql, ResourceType.LEASED_SEMAPHORE, name, false);
                if (row == null) {
                  return false;
                }
                int deleted;
                try (PreparedStatement delete =
                    c.prepareStatement(sql.deleteHolder + " AND expires_at > ?")) {
                  delete.setString(1, row.key);
                  delete.setString(2, ResourceKeys.holder(permitId));
                  delete.setLong(3, row.now);
                  deleted = delete.executeUpdate();
                }
                if (deleted == 0) {
                  return false;
                }
                wakeups.publish(c, row.key, Wakeup.of(1));
                return true;
              });
        }

        @Override
        public CompletionStage<Integer> availablePermits(String name) {
          return transactions.submit(
              "reading leased semaphore '" + name + "'",
              c -> {
                ResourceRow row =
                    ResourceRow.lock(c, sql, ResourceType.LEASED_SEMAPHORE, name, false);
                if (row == null || row.amount == null) {
                  return 0;
                }
                int granted = 0;
                try (PreparedStatement select = c.prepareStatement(sql.holdersOfResource)) {
                  select.setString(1, row.key);
                  select.setLong(2, row.now);
                  try (ResultSet rs = select.executeQuery()) {
                    while (rs.next()) {
                      granted++;
                    }
                  }
                }
                return (int) (row.amount - granted);
              });
        }
      };

  private AcquireResult acquirePermit(Connection c, String name, String permitId, long leaseMillis)
      throws SQLException {
    ResourceRow row = lockRow(c, ResourceType.LEASED_SEMAPHORE, name);
    long now = row.now;
    try (PreparedStatement purge = c.prepareStatement(sql.deleteExpiredHolders)) {
      purge.setString(1, row.key);
      purge.setLong(2, now);
      purge.executeUpdate();
    }
    int granted = 0;
    long earliest = -1;
    long existingToken = -1;
    long existingExpiry = 0;
    try (PreparedStatement select = c.prepareStatement(sql.holdersOfResource)) {
      select.setString(1, row.key);
      select.setLong(2, now);
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          granted++;
          long left = rs.getLong(2) - now;
          earliest = earliest < 0 ? left : Math.min(earliest, left);
          if (rs.getString(1).equals(permitId)) {
            existingToken = rs.getLong(3);
            existingExpiry = rs.getLong(2);
          }
        }
      }
    }
    if (existingToken >= 0) {
      if (now + leaseMillis > existingExpiry) {
        try (PreparedStatement update = c.prepareStatement(sql.updateHolder)) {
          update.setInt(1, 0);
          update.setInt(2, 1);
          update.setLong(3, now + leaseMillis);
          update.setString(4, row.key);
          update.setString(5, ResourceKeys.holder(permitId));
          update.executeUpdate();
        }
      }
      return AcquireResult.granted(existingToken, 1);
    }
    long total = row.amount == null ? 0 : row.amount;
    if (total - granted <= 0) {
      return AcquireResult.busy(earliest);
    }
    long token = row.nextToken();
    try (PreparedStatement insert = c.prepareStatement(sql.insertHolder)) {
      insert.setString(1, row.key);
      insert.setString(2, ResourceKeys.holder(permitId));
      insert.setString(3, permitId);
      insert.setString(4, clientId);
      insert.setInt(5, 0);
      insert.setInt(6, 1);
      insert.setLong(7, now + leaseMillis);
      insert.setLong(8, token);
      insert.executeUpdate();
    }
    row.save(c, sql);
    return AcquireResult.granted(token, 1);
  }

  private final LatchStore latches =
      new LatchStore() {
        @Override
        public CompletionStage<Boolean> trySetCount(String name, long count) {
          return transactions.submit(
              "setting latch '" + name + "'",
              c -> {
                ResourceRow row = lockRow(c, ResourceType.COUNT_DOWN_LATCH, name);
                if (row.amount != null && row.amount > 0) {
                  return false;
                }
                row.amount = count;
                row.save(c, sql);
                return true;
              });
        }

        @Override
        public CompletionStage<Long> countDown(String name) {
          return transactions.submit(
              "count-down of latch '" + name + "'",
              c -> {
                ResourceRow row =
                    ResourceRow.lock(c, sql, ResourceType.COUNT_DOWN_LATCH, name, false);
                if (row == null || row.amount == null || row.amount == 0) {
                  return 0L;
                }
                long left = row.amount - 1;
                row.amount = left;
                row.save(c, sql);
                if (left == 0) {
                  wakeups.publish(c, row.key, Wakeup.of(Wakeup.ALL));
                }
                return left;
              });
        }

        @Override
        public CompletionStage<Long> count(String name) {
          return transactions.submit(
              "reading latch '" + name + "'",
              c -> {
                Long amount = readAmount(c, ResourceType.COUNT_DOWN_LATCH, name);
                return amount == null ? 0L : amount;
              });
        }
      };
}
