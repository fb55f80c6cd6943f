package io.latchkey.zookeeper;

import io.latchkey.BackendUnavailableException;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * The base added to every fencing token the backend hands out, one per life of the server's data,
 * so that tokens keep growing when a server (or a whole ensemble) is restarted without its data.
 *
 * <p>Why. A token is a node's creation zxid (plus a lock's raise offset, {@link LockFence}). A
 * server that starts on an empty data directory starts its zxids over, below every token handed out
 * before; a fenced resource that saw an old token would refuse every new holder, and still take a
 * late write of a paused old one. Nothing of the old data survives to say where it stopped, so the
 * base comes from the only thing that moves on across the wipe: the leader's wall clock, which
 * stamps a node's {@code ctime} when it creates it (the client's clock never enters).
 *
 * <p>How. The record {@code /token-base} is created once per life of the data (create if absent;
 * whoever loses the race reads the winner's) and never written; {@code base = ctime_ms << }{@value
 * #MILLIS_SHIFT}, and a token is {@code base + czxid (+ offset)}. The base is constant while the
 * data lives, so tokens of one name keep the zxids' order; a later life's base is larger by 2048
 * per millisecond between the two records' creations, which must exceed the zxids (and raise
 * offsets) the old life reached: a standalone server counts one zxid per write, so it never gets
 * near; an ensemble's zxid jumps by 2^32 at every leader election, so the data must have lived
 * about 35 minutes per election it went through before a wipe. Why 2048 and not more: a quorum
 * member's token must stay below 2^53 (docs/adr/0009-quorum-fencing.md), and 2^11 × a millisecond
 * clock reaches 2^53 in the year 2109.
 *
 * <p>Which base belongs to an answer. A ZooKeeper session lives on one life of the data: a server
 * refuses a session it does not know (it expired), or one whose client saw a larger zxid, so a
 * wiped server makes its clients open new sessions. The base is therefore kept per session: read
 * again for each new one, and only taken as a session's if the client's handle had that session
 * both when the read was sent and when it was answered (a handle keeps its session for life, and
 * Curator replaces the handle for a new one). An answer takes the base of the client's session when
 * it is handled, which is the session it came through: handles only move on, and a wiped server
 * refuses the old handle, which Curator replaces only a session timeout later, when its answers
 * have long been handled (on its own event thread, where answers are handled). Not the session of
 * the node an answer is about: a node that another process of an owner token made lives in that
 * process's session, on the same data.
 */
final class TokenBase {
  /** How far the record's creation time is shifted: 2048 tokens per millisecond. */
  static final int MILLIS_SHIFT = 11;

  /**
   * A session and the base of the data it lives on.
   *
   * @param session the session
   * @param base its base
   */
  private record Known(long session, long base) {}

  private final ZooKeeperCalls calls;
  private final LongSupplier session;
  private volatile @Nullable Known known;

  /**
   * @param calls the client's calls, in the backend's namespace
   * @param session the session of the client's handle now, 0 while it has none
   */
  TokenBase(ZooKeeperCalls calls, LongSupplier session) {
    this.calls = calls;
    this.session = session;
  }

  /**
   * @return the base of the data the client's session lives on now: the base of an answer handled
   *     now. Fails with CONNECTIONLOSS while the client has no session, or SESSIONEXPIRED if its
   *     handle has another session by the time the base is read: failures of the connection, as the
   *     callers treat them
   */
  CompletableFuture<Long> current() {
    long now = session.getAsLong();
    Known cached = known;
    if (cached != null && cached.session() == now) {
      return CompletableFuture.completedFuture(cached.base());
    }
    if (now == 0) {
      return CompletableFuture.failedFuture(
          KeeperException.create(KeeperException.Code.CONNECTIONLOSS));
    }
    return read(0)
        .thenCompose(
            base -> {
              if (session.getAsLong() != now) {
                return CompletableFuture.failedFuture(
                    KeeperException.create(KeeperException.Code.SESSIONEXPIRED));
              }
              known = new Known(now, base);
              return CompletableFuture.completedFuture(base);
            });
  }

  /**
   * The base of a grant made in {@code grantSession}: the one known for that session, without a
   * request, if the session's base was read before (an attempt reads it first, {@link #current},
   * before it writes anything); else the current one. A grant is written before its base is asked
   * for, so a read here that fails leaves a grant written and not answered: only a session that
   * changed between the attempt's first read and its grant leads to a read here.
   *
   * @param grantSession the session of the client's handle when the grant's node was written
   * @return the base
   */
  CompletableFuture<Long> ofGrant(long grantSession) {
    Known cached = known;
    if (cached != null && cached.session() == grantSession) {
      return CompletableFuture.completedFuture(cached.base());
    }
    return current();
  }

  /**
   * @param record the stat of the record {@code /token-base}
   * @return the base it makes
   */
  static long ofRecord(Stat record) {
    return record.getCtime() << MILLIS_SHIFT;
  }

  /** Reads the record, creating it first if the data has none. */
  private CompletableFuture<Long> read(int round) {
    return calls
        .stat(ZooKeeperPaths.TOKEN_BASE)
        .thenCompose(
            stat -> {
              if (stat != null) {
                return CompletableFuture.completedFuture(ofRecord(stat));
              }
              if (round > 0) {
                // Created (by this client or another) and gone again: deleted by hand.
                return CompletableFuture.failedFuture(
                    new BackendUnavailableException(
                        ZooKeeperPaths.TOKEN_BASE
                            + " was deleted as it was created: it must never be deleted",
                        KeeperException.create(
                            KeeperException.Code.NONODE, ZooKeeperPaths.TOKEN_BASE)));
              }
              return calls
                  .create(ZooKeeperPaths.TOKEN_BASE, new byte[0], CreateMode.PERSISTENT)
                  .thenCompose(created -> read(round + 1));
            });
  }
}
