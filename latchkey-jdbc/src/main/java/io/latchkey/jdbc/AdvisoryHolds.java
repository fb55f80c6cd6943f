package io.latchkey.jdbc;

import io.latchkey.Feature;
import io.latchkey.LockMode;
import io.latchkey.UnsupportedFeatureException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * Advisory mode's holds: every holder row of a lock is backed by a database advisory lock that the
 * holder's client holds on its pinned connection ({@link PinnedSession}), and a holder lives
 * exactly as long as that lock, that is, as long as the connection.
 *
 * <p>The keys. PostgreSQL's advisory locks take a 64-bit key: the first 8 bytes of the SHA-256 of
 * the table prefix and the lock's resource key. Two names can share a key; the table {@code
 * <prefix>advisory_keys} remembers which resource claimed each key first, and a name whose key
 * another name claimed is refused with {@link IllegalArgumentException} (never silently shared).
 * MariaDB's {@code GET_LOCK} takes a name of at most 64 characters, server-wide: the SHA-256 (64
 * hex digits) of the database, the prefix and the resource key, as wide as the resource keys of the
 * rows, so there is nothing to detect. MariaDB has no shared advisory locks: no read-write lock.
 *
 * <p>Liveness. A foreign holder row is alive while its client's connection holds the lock's key:
 * PostgreSQL's {@code pg_locks}, joined to the sessions' {@code application_name} (each pinned
 * connection names itself {@code latchkey:<client id>}), tells which clients hold the key;
 * MariaDB's {@code IS_USED_LOCK} tells whether anyone does (there is at most one exclusive holder).
 * A dead holder's rows are dropped by the next operation on the lock; leases in the rows are not
 * judged (a holder whose connection lives keeps its hold). This client's own rows are alive by
 * construction: a new pinned connection deletes the rows of the one that died before anything else
 * runs on it.
 *
 * <p>Holds stack: an owner's first hold in a mode takes one advisory lock in that mode, its last
 * release in that mode gives one back (both databases count re-entries of a session), so several
 * owners of this client, or one owner holding both sides, each keep their own.
 */
final class AdvisoryHolds implements HoldKeeper {
  /** How long ending another client's connection may wait until the database has freed it. */
  private static final long SESSION_END_MILLIS = 5_000;

  /** How many verified keys are remembered before the memory starts over. */
  private static final int VERIFIED_KEYS = 10_000;

  private final SqlDialect dialect;
  private final String prefix;
  private final String clientId;
  private final String keysTable;
  private final String holdersTable;
  private final String resourcesTable;
  private final Set<String> verified = ConcurrentHashMap.newKeySet();
  private volatile @Nullable String database;

  AdvisoryHolds(SqlDialect dialect, String prefix, String clientId) {
    if (dialect == SqlDialect.H2) {
      throw new IllegalArgumentException(
          "latchkey-jdbc's advisory mode needs PostgreSQL or MariaDB/MySQL; H2 has no advisory"
              + " locks (use the table mode)");
    }
    this.dialect = dialect;
    this.prefix = prefix;
    this.clientId = clientId;
    this.keysTable = prefix + "advisory_keys";
    this.holdersTable = prefix + "holders";
    this.resourcesTable = prefix + "resources";
  }

  /** What each pinned connection of a client calls itself (PostgreSQL's application_name). */
  static String sessionName(String clientId) {
    String name = "latchkey:" + clientId;
    // PostgreSQL keeps 63 bytes of it.
    return name.length() <= 63 ? name : name.substring(0, 63);
  }

  String keysTable() {
    return keysTable;
  }

  /**
   * Gives back every advisory lock of a connection that is about to be closed: a connection of the
   * application's pool is not ended by closing it, and must not keep them, nor this client's name.
   */
  void releaseAll(Connection connection) throws SQLException {
    try (PreparedStatement release =
        connection.prepareStatement(
            dialect == SqlDialect.POSTGRESQL
                ? "SELECT pg_advisory_unlock_all(), set_config('application_name', '', false)"
                : "SELECT RELEASE_ALL_LOCKS()")) {
      release.executeQuery().close();
    }
  }

  @Override
  public void purge(Connection connection, LockRecord lock) throws SQLException {
    lock.purgeQueue();
    boolean foreign = false;
    for (LockRecord.Holder holder : lock.holders.values()) {
      foreign |= !holder.clientId.equals(clientId);
    }
    if (!foreign) {
      return;
    }
    Set<String> alive = liveSessions(connection, lock.resource.key);
    lock.dropHolders(
        holder ->
            !holder.clientId.equals(clientId)
                && !alive.contains(sessionName(holder.clientId))
                && !alive.contains(ANY_SESSION));
  }

  /** MariaDB cannot tell whose connection holds a lock by name: "someone does". */
  private static final String ANY_SESSION = "";

  private Set<String> liveSessions(Connection connection, String resourceKey) throws SQLException {
    Set<String> alive = new HashSet<>();
    if (dialect == SqlDialect.POSTGRESQL) {
      long key = postgresKey(resourceKey);
      try (PreparedStatement select =
          connection.prepareStatement(
              "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
                  + " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
                  + " AND l.database = (SELECT oid FROM pg_database WHERE datname ="
                  + " current_database()) AND l.classid::bigint = ? AND l.objid::bigint = ?")) {
        select.setLong(1, key >>> 32);
        select.setLong(2, key & 0xFFFF_FFFFL);
        try (ResultSet rs = select.executeQuery()) {
          while (rs.next()) {
            String session = rs.getString(1);
            if (session != null && session.startsWith("latchkey:")) {
              alive.add(session);
            }
          }
        }
      }
    } else {
      try (PreparedStatement select = connection.prepareStatement("SELECT IS_USED_LOCK(?)")) {
        select.setString(1, mariaDbName(connection, resourceKey));
        try (ResultSet rs = select.executeQuery()) {
          rs.next();
          rs.getLong(1);
          if (!rs.wasNull()) {
            alive.add(ANY_SESSION);
          }
        }
      }
    }
    return alive;
  }

  @Override
  public boolean take(
      Connection connection, LockRecord lock, LockRecord.Holder holder, LockMode mode)
      throws SQLException {
    String resourceKey = lock.resource.key;
    if (dialect == SqlDialect.POSTGRESQL) {
      long key = postgresKey(resourceKey);
      verify(connection, key, resourceKey, lock.resource.name);
      return queryBoolean(
          connection,
          mode == LockMode.SHARED
              ? "SELECT pg_try_advisory_lock_shared(?)"
              : "SELECT pg_try_advisory_lock(?)",
          key);
    }
    if (mode == LockMode.SHARED) {
      throw new UnsupportedFeatureException(
          Feature.READ_WRITE_LOCK, "latchkey-jdbc advisory mode on MariaDB/MySQL (GET_LOCK)");
    }
    try (PreparedStatement get = connection.prepareStatement("SELECT GET_LOCK(?, 0)")) {
      get.setString(1, mariaDbName(connection, resourceKey));
      try (ResultSet rs = get.executeQuery()) {
        rs.next();
        return rs.getInt(1) == 1;
      }
    }
  }

  @Override
  public void give(Connection connection, LockRecord lock, LockRecord.Holder holder, LockMode mode)
      throws SQLException {
    if (!holder.clientId.equals(clientId)) {
      // Only the connection that took an advisory lock can give it back.
      endSession(connection, lock, holder);
      return;
    }
    unlock(connection, lock, mode);
  }

  private void unlock(Connection connection, LockRecord lock, LockMode mode) throws SQLException {
    String resourceKey = lock.resource.key;
    if (dialect == SqlDialect.POSTGRESQL) {
      queryBoolean(
          connection,
          mode == LockMode.SHARED
              ? "SELECT pg_advisory_unlock_shared(?)"
              : "SELECT pg_advisory_unlock(?)",
          postgresKey(resourceKey));
      return;
    }
    try (PreparedStatement release = connection.prepareStatement("SELECT RELEASE_LOCK(?)")) {
      release.setString(1, mariaDbName(connection, resourceKey));
      release.executeQuery().close();
    }
  }

  /**
   * An operator removes a holder. This client's own holder gives its advisory locks back; another
   * client's locks can only be freed by ending that client's connection, which ends every hold of
   * that client (its engine reports them all lost).
   */
  @Override
  public void evict(Connection connection, LockRecord lock, LockRecord.Holder holder)
      throws SQLException {
    if (!holder.clientId.equals(clientId)) {
      endSession(connection, lock, holder);
      return;
    }
    for (LockMode mode : LockMode.values()) {
      if (holder.holds(mode) > 0) {
        unlock(connection, lock, mode);
      }
    }
  }

  /**
   * Ends the connection of another client that holds the lock, and waits (a bounded while) until
   * the database has freed its advisory locks, so that the lock can be taken at once.
   */
  private void endSession(Connection connection, LockRecord lock, LockRecord.Holder holder)
      throws SQLException {
    if (dialect == SqlDialect.POSTGRESQL) {
      // The timeout makes pg_terminate_backend wait until the connection is gone (PostgreSQL 14+).
      try (PreparedStatement end =
          connection.prepareStatement(
              "SELECT pg_terminate_backend(pid, "
                  + SESSION_END_MILLIS
                  + ") FROM pg_stat_activity"
                  + " WHERE application_name = ? AND datname = current_database()")) {
        end.setString(1, sessionName(holder.clientId));
        end.executeQuery().close();
      }
      return;
    }
    String name = mariaDbName(connection, lock.resource.key);
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SESSION_END_MILLIS);
    long session = usedBy(connection, name);
    if (session < 0) {
      return;
    }
    try (PreparedStatement kill = connection.prepareStatement("KILL CONNECTION " + session)) {
      kill.execute();
    }
    while (usedBy(connection, name) == session && System.nanoTime() - deadline < 0) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
    }
  }

  /** MariaDB: the id of the connection that holds the named lock, or -1. */
  private static long usedBy(Connection connection, String name) throws SQLException {
    try (PreparedStatement select = connection.prepareStatement("SELECT IS_USED_LOCK(?)")) {
      select.setString(1, name);
      try (ResultSet rs = select.executeQuery()) {
        rs.next();
        long session = rs.getLong(1);
        return rs.wasNull() ? -1 : session;
      }
    }
  }

  /**
   * Claims the key for the lock's resource, or finds it claimed by the same resource; a key that
   * another resource claimed first is a collision, refused.
   */
  private void verify(Connection connection, long key, String resourceKey, String name)
      throws SQLException {
    if (verified.contains(resourceKey)) {
      return;
    }
    try (PreparedStatement claim =
        connection.prepareStatement(
            "INSERT INTO "
                + keysTable
                + " (lock_key, res_key, name) VALUES (?, ?, ?) ON CONFLICT (lock_key) DO NOTHING")) {
      claim.setLong(1, key);
      claim.setString(2, resourceKey);
      claim.setString(3, name);
      claim.executeUpdate();
    }
    try (PreparedStatement select =
        connection.prepareStatement(
            "SELECT res_key, name FROM " + keysTable + " WHERE lock_key = ?")) {
      select.setLong(1, key);
      try (ResultSet rs = select.executeQuery()) {
        rs.next();
        if (!resourceKey.equals(rs.getString(1))) {
          throw new IllegalArgumentException(
              "the lock name '"
                  + name
                  + "' hashes to the same PostgreSQL advisory key ("
                  + key
                  + ") as the lock '"
                  + rs.getString(2)
                  + "', which took it first: in advisory mode it cannot be used beside that"
                  + " one (rename it, or use another table prefix)");
        }
      }
    }
    if (verified.size() >= VERIFIED_KEYS) {
      verified.clear();
    }
    verified.add(resourceKey);
  }

  /**
   * PostgreSQL: the advisory lock taken and given back inside {@link UncontendedPath}'s statements
   * ({@code pg_try_advisory_lock(k)} only when the lock has no holder row, so that this connection
   * held no lock on {@code k} before). MariaDB: none ({@code GET_LOCK} runs in the general path).
   */
  @Override
  public HoldKeeper.@Nullable InlineHold inlineHold(SqlDialect ignored) {
    if (dialect != SqlDialect.POSTGRESQL) {
      return null;
    }
    return new HoldKeeper.InlineHold() {
      @Override
      public String take(LockMode mode) {
        return mode == LockMode.SHARED
            ? "pg_try_advisory_lock_shared(?)"
            : "pg_try_advisory_lock(?)";
      }

      @Override
      public String give(LockMode mode) {
        return mode == LockMode.SHARED ? "pg_advisory_unlock_shared(?)" : "pg_advisory_unlock(?)";
      }

      @Override
      public String soleHolderAlive() {
        // Only this client's connection can give an advisory lock back; another client's holder
        // (a release by an owner token from another process) takes the general path.
        return "sole_client_id = ?";
      }

      @Override
      public void prepare(Connection connection, String resourceKey, String name)
          throws SQLException {
        verify(connection, postgresKey(resourceKey), resourceKey, name);
      }

      @Override
      public int bindHold(PreparedStatement statement, int index, String resourceKey)
          throws SQLException {
        statement.setLong(index, postgresKey(resourceKey));
        return index + 1;
      }

      @Override
      public int bindAlive(PreparedStatement statement, int index) throws SQLException {
        statement.setString(index, clientId);
        return index + 1;
      }

      @Override
      public void undoTake(Connection connection, String resourceKey, LockMode mode)
          throws SQLException {
        // This connection held no lock on the key before the statement (the lock had no holder,
        // and this client's holds all have a holder row or are the sole holder), and holds one
        // now only if the statement took it; this client's operations take turns on the
        // connection, so no hold of this client can have appeared since.
        long key = postgresKey(resourceKey);
        try (PreparedStatement undo =
            connection.prepareStatement(
                "SELECT "
                    + give(mode)
                    + " FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted"
                    + " AND l.objsubid = 1 AND l.pid = pg_backend_pid() AND l.mode = ?"
                    + " AND l.database = (SELECT oid FROM pg_database WHERE datname ="
                    + " current_database()) AND l.classid::bigint = ? AND l.objid::bigint = ?"
                    + " AND NOT EXISTS (SELECT 1 FROM "
                    + holdersTable
                    + " WHERE res_key = ? AND client_id = ?) AND NOT EXISTS (SELECT 1 FROM "
                    + resourcesTable
                    + " WHERE res_key = ? AND sole_client_id = ?)")) {
          undo.setLong(1, key);
          undo.setString(2, mode == LockMode.SHARED ? "ShareLock" : "ExclusiveLock");
          undo.setLong(3, key >>> 32);
          undo.setLong(4, key & 0xFFFF_FFFFL);
          undo.setString(5, resourceKey);
          undo.setString(6, clientId);
          undo.setString(7, resourceKey);
          undo.setString(8, clientId);
          undo.executeQuery().close();
        }
      }
    };
  }

  long postgresKey(String resourceKey) {
    return ByteBuffer.wrap(sha256(prefix + ":" + resourceKey)).getLong();
  }

  private String mariaDbName(Connection connection, String resourceKey) throws SQLException {
    String db = database;
    if (db == null) {
      try (PreparedStatement select = connection.prepareStatement("SELECT DATABASE()");
          ResultSet rs = select.executeQuery()) {
        rs.next();
        db = String.valueOf(rs.getString(1));
      }
      database = db;
    }
    return HexFormat.of().formatHex(sha256(db + "/" + prefix + ":" + resourceKey));
  }

  private static boolean queryBoolean(Connection connection, String query, long key)
      throws SQLException {
    try (PreparedStatement statement = connection.prepareStatement(query)) {
      statement.setLong(1, key);
      try (ResultSet rs = statement.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  private static byte[] sha256(String text) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("every JDK has SHA-256", e);
    }
  }
}
