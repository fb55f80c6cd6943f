package io.latchkey.jdbc;

import io.latchkey.LockMode;
import io.latchkey.spi.GrantEvents;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.ResourceType;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Row mode's holds: every holder row of a lock is backed by a row of {@code <prefix>row_locks} that
 * a transaction holds with {@code SELECT ... FOR UPDATE}, by primary key, on a connection that
 * serves that hold only, and a holder lives exactly as long as that transaction.
 *
 * <p>Why a connection per hold. The row locks of one transaction can only be released together (by
 * its commit or rollback), so two holds on one connection could not end one at a time. Hold
 * connections come from a source of their own (over a URI, a pool of at most {@code
 * holdConnections}; over a data source, the user's pool) and are bounded by {@code
 * holdConnections}: a client that holds that many locks and asks for one more is refused at once
 * with {@link IllegalStateException} saying so, never left waiting (a thread that holds locks and
 * waits for a connection only another release frees would wait for ever). Re-entries and an owner's
 * second mode ride on its one hold.
 *
 * <p>Taking a hold, inside the operation that holds the name's resource row: on the hold's
 * connection, insert its lock row (committed at once: an uncommitted row is invisible to other
 * transactions on PostgreSQL, and its lock with it) with a random id, the grant's token and the
 * connection's id, then open a transaction that locks it. Nobody can see the row unlocked in
 * between: every check of it runs under the resource row's lock, which the taking operation holds.
 * The hold is <em>pending</em> until that operation has committed ({@link #settled}): if it failed,
 * even after its commit was sent, the hold is given back, so a grant the engine never heard of
 * cannot stay held for as long as the client lives.
 *
 * <p>Liveness. Every operation on a lock first reads the name's lock rows, then selects them again
 * {@code FOR UPDATE SKIP LOCKED}: a row it can lock is nobody's any more (its connection or
 * transaction ended), and is deleted; a holder row with no row that someone else locks has ended,
 * and is dropped, whichever client it belongs to. This client also checks its hold connections
 * every {@value ConnectionBoundBackend#CHECK_MILLIS} ms and reports a dead one's grant lost at once
 * ({@link GrantEvents#lost}): only that grant, the others live on their own connections. A grant
 * whose hold died in the moment between its commit and its settling is not known to the engine when
 * the loss is reported; the next renewal reports it ({@link #gone}).
 *
 * <p>Giving back: the hold's transaction deletes its row and commits, which releases the row lock.
 * Another client's hold (an operator's evict, a release by an owner token from another process) can
 * only be ended by ending its connection ({@code pg_terminate_backend}, {@code KILL CONNECTION});
 * the deletion of its row then waits until the database has rolled it back. Only that hold ends:
 * its client's other holds live on other connections.
 */
final class RowHolds implements HoldKeeper {
  private static final Logger LOG = LoggerFactory.getLogger(RowHolds.class);

  private final SqlDialect dialect;
  private final ConnectionSource source;
  private final int maxHolds;
  private final Semaphore free;
  private final String clientId;
  private final GrantEvents events;
  private final String description;
  private final long timeoutMillis;
  private final String insert;
  private final String lockRow;
  private final String selectRows;
  private final String selectFree;
  private final String deleteRow;
  private final Map<HoldKey, Hold> holds = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** A hold is one grant: the resource's key and the grant's token. */
  private record HoldKey(String resourceKey, long token) {}

  /** A hold, on its own connection, whose transaction locks its row. */
  private static final class Hold {
    final HoldKey key;
    final String name;
    final String owner;
    final String holdId;
    final Connection connection;
    final ReentrantLock busy = new ReentrantLock();
    volatile boolean pending = true;

    Hold(HoldKey key, String name, String owner, String holdId, Connection connection) {
      this.key = key;
      this.name = name;
      this.owner = owner;
      this.holdId = holdId;
      this.connection = connection;
    }

    GrantRef grant() {
      return new GrantRef(new HolderRef(ResourceType.LOCK, name, owner), key.token);
    }
  }

  /**
   * @param schema the tables
   * @param source where hold connections come from
   * @param maxHolds how many holds at once, at least 1
   * @param clientId this client
   * @param events where lost holds are reported
   * @param operationTimeout the bound of each statement on a hold connection
   * @param description the backend, for messages
   */
  RowHolds(
      TableSchema schema,
      SqlDialect dialect,
      ConnectionSource source,
      int maxHolds,
      String clientId,
      GrantEvents events,
      java.time.Duration operationTimeout,
      String description) {
    if (dialect == SqlDialect.H2) {
      throw new IllegalArgumentException(ConnectionBoundBackend.notOnH2(JdbcMode.ROW));
    }
    this.dialect = dialect;
    this.source = source;
    this.maxHolds = maxHolds;
    this.free = new Semaphore(maxHolds);
    this.clientId = clientId;
    this.events = events;
    this.description = description;
    this.timeoutMillis = Math.max(1, operationTimeout.toMillis());
    String rows = schema.rowLocks();
    this.insert =
        "INSERT INTO "
            + rows
            + " (res_key, hold_id, token, client_id, session_id) VALUES (?, ?, ?, ?, "
            + (dialect == SqlDialect.POSTGRESQL ? "pg_backend_pid()" : "CONNECTION_ID()")
            + ")";
    this.lockRow = "SELECT token FROM " + rows + " WHERE res_key = ? AND hold_id = ? FOR UPDATE";
    this.selectRows = "SELECT hold_id, token, session_id FROM " + rows + " WHERE res_key = ?";
    this.selectFree = "SELECT hold_id FROM " + rows + " WHERE res_key = ? FOR UPDATE SKIP LOCKED";
    this.deleteRow = "DELETE FROM " + rows + " WHERE res_key = ? AND hold_id = ?";
  }

  @Override
  public void purge(Connection connection, LockRecord lock) throws SQLException {
    lock.purgeQueue();
    if (lock.holders.isEmpty()) {
      return;
    }
    String resourceKey = lock.resource.key;
    Map<String, Long> rows = new HashMap<>();
    try (PreparedStatement select = connection.prepareStatement(selectRows)) {
      select.setString(1, resourceKey);
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          rows.put(rs.getString(1), rs.getLong(2));
        }
      }
    }
    List<String> unlocked = new ArrayList<>();
    try (PreparedStatement select = connection.prepareStatement(selectFree)) {
      select.setString(1, resourceKey);
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          unlocked.add(rs.getString(1));
        }
      }
    }
    if (!unlocked.isEmpty()) {
      try (PreparedStatement delete = connection.prepareStatement(deleteRow)) {
        for (String holdId : unlocked) {
          delete.setString(1, resourceKey);
          delete.setString(2, holdId);
          delete.addBatch();
        }
        delete.executeBatch();
      }
    }
    Set<Long> held = new HashSet<>();
    rows.forEach(
        (holdId, token) -> {
          if (!unlocked.contains(holdId)) {
            held.add(token);
          }
        });
    lock.dropHolders(
        holder -> {
          if (held.contains(holder.token)) {
            return false;
          }
          Hold own = holds.get(new HoldKey(resourceKey, holder.token));
          if (own != null) {
            forget(own, "its transaction was found ended by an operation on the lock");
          }
          return true;
        });
  }

  @Override
  public boolean take(
      Connection connection, LockRecord lock, LockRecord.Holder holder, LockMode mode)
      throws SQLException {
    HoldKey key = new HoldKey(lock.resource.key, holder.token);
    if (holds.containsKey(key)) {
      // The owner's other mode: it rides on the owner's one hold.
      return true;
    }
    if (closed) {
      throw new SQLException("the backend is closed", "08003");
    }
    if (!free.tryAcquire()) {
      throw new IllegalStateException(
          "the lock '"
              + lock.resource.name
              + "' cannot be held: this client of "
              + description
              + " already holds "
              + maxHolds
              + " locks, each on a connection of its own, and row mode holds at most"
              + " holdConnections = "
              + maxHolds
              + " at once (raise latchkey.holdConnections, or use the advisory mode, which holds"
              + " every lock on one connection)");
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    Connection held;
    try {
      held = source.borrow(deadline);
    } catch (SQLException | RuntimeException e) {
      free.release();
      throw e;
    }
    String holdId = HexFormat.of().formatHex(randomBytes());
    try {
      held.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, timeoutMillis));
      held.setAutoCommit(true);
      try (PreparedStatement row = held.prepareStatement(insert)) {
        row.setString(1, lock.resource.key);
        row.setString(2, holdId);
        row.setLong(3, holder.token);
        row.setString(4, clientId);
        row.executeUpdate();
      }
      held.setAutoCommit(false);
      try (PreparedStatement select = held.prepareStatement(lockRow)) {
        select.setString(1, lock.resource.key);
        select.setString(2, holdId);
        try (ResultSet rs = select.executeQuery()) {
          if (!rs.next()) {
            throw new IllegalStateException("the row of a new hold vanished before it was locked");
          }
        }
      }
    } catch (SQLException | RuntimeException e) {
      // A row inserted without its lock is nobody's: the next operation on the lock deletes it.
      giveBack(held, true);
      free.release();
      throw e;
    }
    holds.put(key, new Hold(key, lock.resource.name, ownerOf(lock, holder), holdId, held));
    return true;
  }

  private static String ownerOf(LockRecord lock, LockRecord.Holder holder) {
    for (Map.Entry<String, LockRecord.Holder> entry : lock.holders.entrySet()) {
      if (entry.getValue() == holder) {
        return entry.getKey();
      }
    }
    throw new IllegalStateException("a hold was taken for a holder the lock does not have");
  }

  private static byte[] randomBytes() {
    byte[] bytes = new byte[16];
    ThreadLocalRandom.current().nextBytes(bytes);
    return bytes;
  }

  @Override
  public void give(Connection connection, LockRecord lock, LockRecord.Holder holder, LockMode mode)
      throws SQLException {
    LockMode other = mode == LockMode.SHARED ? LockMode.EXCLUSIVE : LockMode.SHARED;
    if (holder.holds(other) > 0) {
      // Its other mode still rides on the hold.
      return;
    }
    evict(connection, lock, holder);
  }

  @Override
  public void evict(Connection connection, LockRecord lock, LockRecord.Holder holder)
      throws SQLException {
    Hold own = holds.get(new HoldKey(lock.resource.key, holder.token));
    if (own != null) {
      end(own);
      return;
    }
    endForeign(connection, lock, holder);
  }

  /** Gives a hold of this client back: its transaction deletes its row and commits. */
  private void end(Hold hold) {
    if (!holds.remove(hold.key, hold)) {
      return;
    }
    hold.busy.lock();
    try {
      Connection connection = hold.connection;
      boolean broken = false;
      try (PreparedStatement delete = connection.prepareStatement(deleteRow)) {
        delete.setString(1, hold.key.resourceKey);
        delete.setString(2, hold.holdId);
        delete.executeUpdate();
        connection.commit();
        connection.setAutoCommit(true);
      } catch (SQLException | RuntimeException e) {
        // The connection is gone, and its row lock with it: the row left unlocked is deleted by the
        // next operation on the lock.
        LOG.debug("giving back the row lock of '{}' failed", hold.name, e);
        broken = true;
      }
      giveBack(connection, broken);
    } finally {
      hold.busy.unlock();
      free.release();
    }
  }

  /**
   * Ends another client's hold: only its own connection can release its row lock, so that
   * connection is ended; the deletion of the row then waits until the database has rolled the
   * hold's transaction back.
   */
  private void endForeign(Connection connection, LockRecord lock, LockRecord.Holder holder)
      throws SQLException {
    Map<String, Long> sessions = new HashMap<>();
    try (PreparedStatement select = connection.prepareStatement(selectRows)) {
      select.setString(1, lock.resource.key);
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          if (rs.getLong(2) == holder.token) {
            sessions.put(rs.getString(1), rs.getLong(3));
          }
        }
      }
    }
    for (long session : sessions.values()) {
      if (dialect == SqlDialect.POSTGRESQL) {
        try (PreparedStatement end =
            connection.prepareStatement(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    + " WHERE pid = ? AND datname = current_database()")) {
          end.setLong(1, session);
          end.executeQuery().close();
        }
      } else {
        try (PreparedStatement kill = connection.prepareStatement("KILL CONNECTION " + session)) {
          kill.execute();
        } catch (SQLException alreadyGone) {
          // Unknown thread id: it ended by itself, which is what was wanted.
          LOG.debug("ending connection {} of a hold failed", session, alreadyGone);
        }
      }
    }
    // By primary key: a deletion that scanned the name's other rows would wait on InnoDB for the
    // row locks of the holders that live on.
    try (PreparedStatement delete = connection.prepareStatement(deleteRow)) {
      for (String holdId : sessions.keySet()) {
        delete.setString(1, lock.resource.key);
        delete.setString(2, holdId);
        delete.addBatch();
      }
      delete.executeBatch();
    }
  }

  /**
   * The operation that may have taken holds for {@code owner} on the lock is over: a granted one
   * keeps them, a failed one (whatever its commit did) gives them back.
   *
   * @param resourceKey the lock's key
   * @param owner the owner that asked
   * @param granted whether the operation answered with a grant
   */
  @Override
  public void settled(String resourceKey, String owner, boolean granted) {
    for (Hold hold : holds.values()) {
      if (hold.pending && hold.key.resourceKey.equals(resourceKey) && hold.owner.equals(owner)) {
        if (granted) {
          hold.pending = false;
        } else {
          end(hold);
        }
      }
    }
  }

  @Override
  public Set<GrantRef> gone(Collection<GrantRef> grants) {
    Set<GrantRef> gone = new HashSet<>();
    for (GrantRef grant : grants) {
      if (grant.type() == ResourceType.LOCK
          && !holds.containsKey(
              new HoldKey(
                  ResourceKeys.resource(ResourceType.LOCK, grant.name()), grant.fencingToken()))) {
        gone.add(grant);
      }
    }
    return gone;
  }

  /**
   * Checks that each hold's connection lives (a round trip within {@code timeoutSeconds}); a dead
   * one's grant is reported lost. Skips a hold that an operation is giving back. Runs on the
   * blocking executor.
   */
  void check(int timeoutSeconds) {
    for (Hold hold : holds.values()) {
      if (closed || !hold.busy.tryLock()) {
        continue;
      }
      boolean alive;
      try {
        alive = holds.get(hold.key) != hold || isValid(hold.connection, timeoutSeconds);
      } finally {
        hold.busy.unlock();
      }
      if (!alive) {
        forget(hold, "the liveness check found its connection closed");
      }
    }
  }

  private static boolean isValid(Connection connection, int timeoutSeconds) {
    try {
      return connection.isValid(timeoutSeconds);
    } catch (SQLException | RuntimeException e) {
      return false;
    }
  }

  /** Drops a hold whose connection or transaction ended, and reports its grant lost. */
  private void forget(Hold hold, String why) {
    if (!holds.remove(hold.key, hold)) {
      return;
    }
    giveBack(hold.connection, true);
    free.release();
    if (!closed) {
      String reason =
          "the transaction that held the row lock of '"
              + hold.name
              + "' on "
              + description
              + " ended: "
              + why;
      LOG.warn("{}; the lock is lost", reason);
      events.lost(hold.grant(), reason);
    }
  }

  private void giveBack(Connection connection, boolean broken) {
    source.giveBack(connection, broken);
  }

  /** Gives every hold back (each deletes its row and commits), then closes the source. */
  void close() {
    closed = true;
    for (Hold hold : List.copyOf(holds.values())) {
      end(hold);
    }
    source.close();
  }
}
