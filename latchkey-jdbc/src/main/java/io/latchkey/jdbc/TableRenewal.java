package io.latchkey.jdbc;

import io.latchkey.spi.GrantRef;
import io.latchkey.spi.RenewResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * Renews a batch of grants (lock holders and leased permits alike: both are holder rows, and on
 * PostgreSQL a lock's {@link SoleHolder} in its resource row) in one transaction: one {@code
 * UPDATE} per chunk of grants (two with sole holders) extends every live row whose token is the
 * grant's, and one {@code SELECT} tells which are alive now, so the rest are gone. The grant's
 * token is part of the key, so a row re-granted to the same owner is never renewed by the old
 * grant.
 */
final class TableRenewal {
  /** Grants per statement: three parameters each, well below every driver's limit. */
  private static final int CHUNK = 300;

  private final Transactions transactions;
  private final Sql sql;
  private final boolean leasesEndHolds;

  TableRenewal(Transactions transactions, Sql sql) {
    this(transactions, sql, true);
  }

  /**
   * @param leasesEndHolds false in advisory mode: a row past its deadline is still held (its
   *     connection holds it), so it is renewed, not gone
   */
  TableRenewal(Transactions transactions, Sql sql, boolean leasesEndHolds) {
    this.transactions = transactions;
    this.sql = sql;
    this.leasesEndHolds = leasesEndHolds;
  }

  CompletionStage<RenewResult> renew(Collection<GrantRef> grants, long leaseMillis) {
    List<GrantRef> all = List.copyOf(grants);
    return transactions.submit(
        "renewal of " + all.size() + " grants",
        c -> {
          long now = sql.now(c);
          Set<GrantRef> gone = new HashSet<>();
          for (int from = 0; from < all.size(); from += CHUNK) {
            gone.addAll(
                renewChunk(
                    c, all.subList(from, Math.min(all.size(), from + CHUNK)), now, leaseMillis));
          }
          return RenewResult.gone(gone);
        });
  }

  private Set<GrantRef> renewChunk(Connection c, List<GrantRef> chunk, long now, long leaseMillis)
      throws SQLException {
    Map<String, GrantRef> byKey = new HashMap<>();
    List<String[]> keys = new ArrayList<>();
    for (GrantRef grant : chunk) {
      String resource = ResourceKeys.resource(grant.type(), grant.name());
      String holder = ResourceKeys.holder(grant.holderId());
      keys.add(new String[] {resource, holder});
      byKey.put(resource + holder + ":" + grant.fencingToken(), grant);
    }
    long aliveAfter = leasesEndHolds ? now : Long.MIN_VALUE;
    // Sole holders first: one that another transaction moves into a holder row meanwhile is
    // either renewed here (that transaction then waits for this one's row lock and moves the
    // renewed lease) or moved before the holder rows' statement starts, which then sees its row.
    String renewSole = sql.renewSole(chunk.size());
    if (renewSole != null) {
      extend(c, renewSole, chunk, keys, now + leaseMillis, aliveAfter);
    }
    extend(c, sql.renew(chunk.size()), chunk, keys, now + leaseMillis, aliveAfter);
    Set<GrantRef> gone = new HashSet<>(chunk);
    try (PreparedStatement select = c.prepareStatement(sql.alive(chunk.size()))) {
      select.setLong(1, aliveAfter);
      int next = bindGrants(select, 2, chunk, keys);
      if (sql.soleHolders) {
        select.setLong(next, aliveAfter);
        bindGrants(select, next + 1, chunk, keys);
      }
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          GrantRef renewed = byKey.get(rs.getString(1) + rs.getString(2) + ":" + rs.getLong(3));
          if (renewed != null) {
            gone.remove(renewed);
          }
        }
      }
    }
    return gone;
  }

  /** Runs one of {@link Sql#renew} and {@link Sql#renewSole}. */
  private static void extend(
      Connection c,
      String statement,
      List<GrantRef> chunk,
      List<String[]> keys,
      long deadline,
      long aliveAfter)
      throws SQLException {
    try (PreparedStatement update = c.prepareStatement(statement)) {
      update.setLong(1, deadline);
      update.setLong(2, deadline);
      update.setLong(3, aliveAfter);
      bindGrants(update, 4, chunk, keys);
      update.executeUpdate();
    }
  }

  /**
   * @return the next parameter index
   */
  private static int bindGrants(
      PreparedStatement statement, int first, List<GrantRef> chunk, List<String[]> keys)
      throws SQLException {
    int index = first;
    for (int i = 0; i < chunk.size(); i++) {
      statement.setString(index++, keys.get(i)[0]);
      statement.setString(index++, keys.get(i)[1]);
      statement.setLong(index++, chunk.get(i).fencingToken());
    }
    return index;
  }
}
