package io.latchkey.jdbc;

import io.latchkey.ClientInfo;
import io.latchkey.HolderInfo;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.spi.AdminStore;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * The operator's operations on the lease table, and the presence rows of clients (a row per client
 * with a deadline by the database's clock, rewritten by each heartbeat). The connection-bound modes
 * extend it.
 */
class TableAdminStore implements AdminStore {
  private final Transactions transactions;
  private final Sql sql;
  private final TableLockStore locks;

  TableAdminStore(Transactions transactions, Sql sql, TableLockStore locks) {
    this.transactions = transactions;
    this.sql = sql;
    this.locks = locks;
  }

  @Override
  public CompletionStage<Boolean> forceRelease(String name) {
    return locks.forceRelease(name);
  }

  @Override
  public CompletionStage<Boolean> evict(String name, String owner) {
    return locks.evict(name, owner);
  }

  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    return locks.inspect(name);
  }

  @Override
  public CompletionStage<List<LockInfo>> list() {
    return transactions.submit(
        "listing of locks",
        c -> {
          Map<String, Integer> queued = new HashMap<>();
          try (PreparedStatement select = c.prepareStatement(sql.countQueues);
              ResultSet rs = select.executeQuery()) {
            while (rs.next()) {
              queued.put(rs.getString(1), rs.getInt(2));
            }
          }
          Map<String, List<HolderInfo>> holders = new LinkedHashMap<>();
          try (PreparedStatement select = c.prepareStatement(sql.listHolders);
              ResultSet rs = select.executeQuery()) {
            while (rs.next()) {
              List<HolderInfo> infos =
                  holders.computeIfAbsent(rs.getString(1), n -> new ArrayList<>());
              String owner = rs.getString(2);
              String clientId = rs.getString(3);
              Duration left = Duration.ofMillis(Math.max(0, rs.getLong(6)));
              long token = rs.getLong(7);
              int exclusive = rs.getInt(5);
              int shared = rs.getInt(4);
              if (exclusive > 0) {
                infos.add(
                    new HolderInfo(owner, clientId, LockMode.EXCLUSIVE, exclusive, left, token));
              }
              if (shared > 0) {
                infos.add(new HolderInfo(owner, clientId, LockMode.SHARED, shared, left, token));
              }
            }
          }
          List<LockInfo> result = new ArrayList<>();
          holders.forEach(
              (name, infos) -> result.add(new LockInfo(name, infos, queued.getOrDefault(name, 0))));
          // The database sorts by its collation; the SPI's order is by code point, as in memory.
          result.sort(java.util.Comparator.comparing(LockInfo::name));
          return result;
        });
  }

  @Override
  public CompletionStage<List<ClientInfo>> clients() {
    return transactions.submit(
        "listing of clients",
        c -> {
          List<ClientInfo> clients = new ArrayList<>();
          try (PreparedStatement select = c.prepareStatement(sql.selectClients);
              ResultSet rs = select.executeQuery()) {
            while (rs.next()) {
              clients.add(
                  new ClientInfo(
                      rs.getString(1),
                      rs.getString(2),
                      rs.getLong(3),
                      Instant.ofEpochMilli(rs.getLong(4))));
            }
          }
          clients.sort(java.util.Comparator.comparing(ClientInfo::clientId));
          return clients;
        });
  }

  @Override
  public CompletionStage<Void> heartbeat(ClientInfo self, long timeToLiveMillis) {
    return transactions.execute(
        "heartbeat of client " + self.clientId(),
        c -> {
          int updated;
          try (PreparedStatement update = c.prepareStatement(sql.updateClient)) {
            update.setString(1, self.host());
            update.setLong(2, self.pid());
            update.setLong(3, self.startedAt().toEpochMilli());
            update.setLong(4, timeToLiveMillis);
            update.setString(5, self.clientId());
            updated = update.executeUpdate();
          }
          if (updated == 0) {
            // Two first heartbeats of one client racing fail on the key, and the loser runs again.
            try (PreparedStatement insert = c.prepareStatement(sql.insertClient)) {
              insert.setString(1, self.clientId());
              insert.setString(2, self.host());
              insert.setLong(3, self.pid());
              insert.setLong(4, self.startedAt().toEpochMilli());
              insert.setLong(5, timeToLiveMillis);
              insert.executeUpdate();
            }
          }
        });
  }

  @Override
  public CompletionStage<Void> leave(String clientId) {
    return transactions.execute(
        "leave of client " + clientId,
        c -> {
          try (PreparedStatement delete = c.prepareStatement(sql.deleteClient)) {
            delete.setString(1, clientId);
            delete.executeUpdate();
          }
        });
  }
}
