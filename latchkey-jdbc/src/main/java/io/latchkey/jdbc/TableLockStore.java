package io.latchkey.jdbc;

import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HandOverResult;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.Wakeup;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Lock records in the lease table. On PostgreSQL, a free lock's first hold and an uncontended last
 * release take {@link UncontendedPath} first: one round trip, decided by the database. Otherwise
 * each operation is one transaction: lock the name's resource row ({@code SELECT ... FOR UPDATE},
 * which also reads the database's clock), load the holder and queue rows, apply the grant rules of
 * {@link LockRequest} and {@link LockStore} in memory, write back the rows that changed and send
 * the wake-ups, commit. The rules are those of the in-memory reference backend, statement for
 * statement, so that the kit holds both to one behaviour. In table mode a release can carry the
 * attempt of a waiter of this client ({@link #releaseAndHandOver}): when the release frees the lock
 * for that waiter at the head of the queue (or with nobody queued), the same transaction applies
 * the attempt to the same loaded rows instead of waking it, so a contended cycle of one client's
 * threads is one transaction.
 */
final class TableLockStore implements LockStore {
  private final Transactions transactions;
  private final Sql sql;
  private final WakeupPublisher wakeups;
  private final String clientId;
  private final HoldKeeper keeper;
  private final @Nullable UncontendedPath uncontended;

  /**
   * Keys of the locks whose last operation here found the uncontended path closed and waiters
   * queued: it is not tried for them (it would find the same, a round trip for nothing) until an
   * operation of the general path leaves nobody queued. Only a hint: both paths decide by the rows.
   */
  private final Set<String> contended = ConcurrentHashMap.newKeySet();

  private static final int CONTENDED_KEYS = 10_000;

  TableLockStore(Transactions transactions, Sql sql, WakeupPublisher wakeups, String clientId) {
    this(transactions, sql, wakeups, clientId, HoldKeeper.LEASES);
  }

  TableLockStore(
      Transactions transactions,
      Sql sql,
      WakeupPublisher wakeups,
      String clientId,
      HoldKeeper keeper) {
    this.transactions = transactions;
    this.sql = sql;
    this.wakeups = wakeups;
    this.clientId = clientId;
    this.keeper = keeper;
    this.uncontended = UncontendedPath.of(sql, keeper);
  }

  @Override
  public CompletionStage<AcquireResult> tryAcquire(LockRequest request) {
    String resourceKey = ResourceKeys.resource(ResourceType.LOCK, request.name());
    return transactions
        .submit(
            "acquire of lock '" + request.name() + "'",
            c -> {
              if (uncontended != null && !contended.contains(resourceKey)) {
                AcquireResult granted = uncontended.acquire(c, request, clientId);
                if (granted != null) {
                  return granted;
                }
                markContended(resourceKey);
              }
              return acquire(c, request);
            })
        .whenComplete(
            (result, failure) ->
                keeper.settled(
                    resourceKey, request.owner(), failure == null && result.isGranted()));
  }

  private AcquireResult acquire(Connection connection, LockRequest request) throws SQLException {
    LockRecord lock = requireRecord(LockRecord.lockAndLoad(connection, sql, request.name(), true));
    return attempt(connection, lock, request, new ArrayList<>());
  }

  /**
   * Applies an acquire attempt to the loaded lock, writes what changed, sends {@code wake} and the
   * wake-ups the attempt adds, and commits.
   */
  private AcquireResult attempt(
      Connection connection, LockRecord lock, LockRequest request, List<String> wake)
      throws SQLException {
    LockRecord.Holder before = lock.holders.get(request.owner());
    boolean firstInMode = before == null || before.holds(request.mode()) == 0;
    AcquireResult result = decide(connection, lock, request, wake);
    if (result == null) {
      // The keeper could not take the hold: refused, and nothing is written.
      return AcquireResult.busy(-1);
    }
    try {
      finish(connection, lock, wake);
      noteQueue(lock);
    } catch (SQLException | RuntimeException e) {
      if (result.isGranted() && firstInMode) {
        // The rows roll back; the hold the keeper took does not by itself. (PostgreSQL runs
        // nothing more in a failed transaction: it is rolled back first.)
        try {
          connection.rollback();
          LockRecord.Holder granted = lock.holders.get(request.owner());
          if (granted != null) {
            keeper.give(connection, lock, granted, request.mode());
          }
        } catch (SQLException | RuntimeException alsoFailed) {
          e.addSuppressed(alsoFailed);
        }
      }
      throw e;
    }
    return result;
  }

  /** The answer, or null if the rules grant the hold and the keeper cannot take it. */
  private @Nullable AcquireResult decide(
      Connection connection, LockRecord lock, LockRequest request, List<String> wake)
      throws SQLException {
    long now = lock.now();
    keeper.purge(connection, lock);
    String owner = request.owner();
    LockRecord.Holder me = lock.holders.get(owner);
    if (request.mode() == LockMode.EXCLUSIVE && me != null && me.exclusive == 0 && me.shared > 0) {
      return AcquireResult.upgradeRefused();
    }
    boolean blockedByHolders = false;
    long obstacleEnds = -1;
    for (var entry : lock.holders.entrySet()) {
      if (entry.getKey().equals(owner)) {
        continue;
      }
      LockRecord.Holder other = entry.getValue();
      if (request.mode() == LockMode.EXCLUSIVE || other.exclusive > 0) {
        blockedByHolders = true;
        // A holder past its deadline is alive only in advisory mode (its connection holds it):
        // when it ends is not known then.
        obstacleEnds = Math.max(obstacleEnds, other.expiresAt > now ? other.expiresAt - now : -1);
      }
    }
    ResourceRow row = lock.resource;
    if (owner.equals(row.wokenOwner)) {
      // The woken owner came: its hand-off is over, granted or not.
      row.wokenOwner = null;
    }
    boolean blockedByQueue = false;
    if (me == null && !blockedByHolders) {
      String keptFor = pendingHandoff(request, lock, wake);
      if (keptFor != null) {
        boolean bothShared =
            request.mode() == LockMode.SHARED && lock.queuedMode(keptFor) == LockMode.SHARED;
        if (keptFor.equals(owner)) {
          row.wokenOwner = null;
        } else if (!bothShared) {
          blockedByQueue = true;
          obstacleEnds = row.wokenAt + request.handoffMillis() - now;
        }
      }
      if (request.fair()) {
        String head = lock.queueHead();
        blockedByQueue = head != null && !head.equals(owner);
      }
      if (request.mode() == LockMode.SHARED) {
        // Writers are preferred: a queued writer ahead of this reader lets it wait (ADR 0006).
        long writerPlaceEnds = lock.writerAheadPlaceEnds(owner);
        if (writerPlaceEnds >= 0) {
          blockedByQueue = true;
          obstacleEnds = writerPlaceEnds;
        }
      }
    }
    if (blockedByHolders || blockedByQueue) {
      if (request.queueKeepAliveMillis() > 0) {
        lock.enqueue(owner, request.mode(), now + request.queueKeepAliveMillis());
      }
      return AcquireResult.busy(obstacleEnds);
    }
    // Changes in memory are written only if the keeper takes the hold: a refusal writes nothing.
    boolean wasQueued = lock.dequeue(owner);
    if (me == null) {
      me = lock.addHolder(owner, clientId);
    }
    if (me.holds(request.mode()) == 0 && !keeper.take(connection, lock, me, request.mode())) {
      return null;
    }
    int holds = me.take(request.mode());
    me.extendTo(now + request.leaseMillis());
    String next = lock.queueHead();
    if (request.mode() == LockMode.SHARED
        && wasQueued
        && next != null
        && lock.queuedMode(next) == LockMode.SHARED) {
      // A queued reader entered: the reader behind it may enter beside it (a writer may not).
      wake(lock, next, wake);
    }
    return AcquireResult.granted(me.token, holds);
  }

  /**
   * The owner a free lock is kept for (its hand-off is pending and younger than the request's
   * {@code handoffMillis}), or null; an owner that missed its turn is dropped from the queue and
   * the next head is woken in its stead (see {@link LockRequest}).
   */
  private @Nullable String pendingHandoff(LockRequest request, LockRecord lock, List<String> wake) {
    ResourceRow row = lock.resource;
    String woken = row.wokenOwner;
    if (woken == null) {
      return null;
    }
    if (lock.queue.containsKey(woken) && lock.now() - row.wokenAt < request.handoffMillis()) {
      return woken;
    }
    row.wokenOwner = null;
    lock.dequeue(woken);
    String head = lock.queueHead();
    if (head == null) {
      return null;
    }
    row.wokenOwner = head;
    row.wokenAt = lock.now();
    if (!head.equals(request.owner())) {
      wake.add(head);
    }
    return head;
  }

  /** Wakes a queued owner and starts its hand-off. */
  private static void wake(LockRecord lock, String owner, List<String> wake) {
    lock.resource.wokenOwner = owner;
    lock.resource.wokenAt = lock.now();
    wake.add(owner);
  }

  /**
   * After a release: if nobody holds the lock exclusively any more (or nobody at all, after a
   * shared release), wake the head of the wait queue, and only it.
   */
  private static void wakeWaiters(LockRecord lock, LockMode released, List<String> wake) {
    if (!acquirableAfter(lock, released)) {
      return;
    }
    String head = lock.queueHead();
    if (head != null) {
      wake(lock, head, wake);
    }
  }

  /** Whether a release in {@code released} mode left the lock acquirable for another owner. */
  private static boolean acquirableAfter(LockRecord lock, LockMode released) {
    return !lock.exclusiveHeld() && (released == LockMode.EXCLUSIVE || lock.holders.isEmpty());
  }

  @Override
  public CompletionStage<ReleaseResult> release(GrantRef grant, LockMode mode) {
    return transactions.submit(
        "release of lock '" + grant.name() + "'",
        c -> {
          String resourceKey = ResourceKeys.resource(ResourceType.LOCK, grant.name());
          if (uncontended != null && !contended.contains(resourceKey)) {
            if (uncontended.release(c, grant, mode)) {
              return ReleaseResult.released(0);
            }
            markContended(resourceKey);
          }
          return release(c, grant, mode, null).released();
        });
  }

  /**
   * Table mode only: there a hold is its holder row, which the release's transaction can give to
   * the next owner together with everything else it writes. In advisory and row modes a hold is
   * also a database lock outside the rows, held by a session (the client's pinned connection, or a
   * connection and open transaction of the hold's own) that the {@link HoldKeeper} takes and gives
   * back around the operation; a grant inside the release would have to take that lock for the next
   * owner in the same step, which is not done: they release and wake as {@link #release} does.
   */
  @Override
  public boolean handsOver() {
    return keeper == HoldKeeper.LEASES;
  }

  /**
   * One transaction of the general path (a hand-over is contended by definition: the uncontended
   * path is not tried): the release, and {@code next}'s attempt on the same loaded rows if it is
   * due, with the acquire's rules, token, lease and queue removal, and no wake-up for it.
   */
  @Override
  public CompletionStage<HandOverResult> releaseAndHandOver(
      GrantRef grant, LockMode mode, LockRequest next) {
    if (!handsOver()) {
      return LockStore.super.releaseAndHandOver(grant, mode, next);
    }
    return transactions.submit(
        "release of lock '" + grant.name() + "' with a hand-over",
        c -> release(c, grant, mode, next));
  }

  /**
   * The release on the general path; with {@code next}, that attempt instead of the wake-up when
   * the release makes the lock acquirable and {@code next}'s owner heads the queue, or nobody is
   * queued.
   */
  private HandOverResult release(
      Connection c, GrantRef grant, LockMode mode, @Nullable LockRequest next) throws SQLException {
    LockRecord lock = loadExisting(c, grant.name());
    if (lock == null) {
      return new HandOverResult(ReleaseResult.NOT_HELD, null);
    }
    keeper.purge(c, lock);
    LockRecord.Holder me = lock.holders.get(grant.holderId());
    if (me == null || !grant.matches(me.token) || me.holds(mode) == 0) {
      lock.save(c, sql);
      return new HandOverResult(ReleaseResult.NOT_HELD, null);
    }
    int remaining = me.give(mode);
    if (remaining == 0) {
      keeper.give(c, lock, me, mode);
    }
    if (me.shared == 0 && me.exclusive == 0) {
      lock.removeHolder(grant.holderId());
    }
    ReleaseResult released = ReleaseResult.released(remaining);
    List<String> wake = new ArrayList<>();
    String head = lock.queueHead();
    if (remaining == 0
        && next != null
        && acquirableAfter(lock, mode)
        && (head == null || next.owner().equals(head))) {
      // The head comes for the turn it would have been woken for, in this same transaction (or,
      // with nobody queued, a waiter behind the holder in this client comes first).
      lock.resource.wokenOwner = null;
      AcquireResult handedOver = attempt(c, lock, next, wake);
      noteQueue(lock);
      return new HandOverResult(released, handedOver);
    }
    if (remaining == 0) {
      wakeWaiters(lock, mode, wake);
    }
    finish(c, lock, wake);
    noteQueue(lock);
    return new HandOverResult(released, null);
  }

  @Override
  public CompletionStage<Void> leaveQueue(String name, String owner) {
    return transactions.execute(
        "leaving the queue of lock '" + name + "'",
        c -> {
          LockRecord lock = loadExisting(c, name);
          if (lock == null) {
            return;
          }
          keeper.purge(c, lock);
          boolean wasHead = owner.equals(lock.queueHead());
          lock.dequeue(owner);
          ResourceRow row = lock.resource;
          if (owner.equals(row.wokenOwner)) {
            row.wokenOwner = null;
          }
          String next = lock.queueHead();
          List<String> wake = new ArrayList<>();
          if (wasHead && next != null && !lock.exclusiveHeld()) {
            wake(lock, next, wake);
          }
          finish(c, lock, wake);
        });
  }

  CompletionStage<Boolean> evict(String name, String owner) {
    return transactions.submit(
        "eviction from lock '" + name + "'",
        c -> {
          LockRecord lock = loadExisting(c, name);
          if (lock == null) {
            return false;
          }
          keeper.purge(c, lock);
          LockRecord.Holder evicted = lock.holders.get(owner);
          if (evicted == null) {
            lock.save(c, sql);
            return false;
          }
          keeper.evict(c, lock, evicted);
          lock.removeHolder(owner);
          List<String> wake = new ArrayList<>();
          wakeWaiters(lock, evicted.exclusive > 0 ? LockMode.EXCLUSIVE : LockMode.SHARED, wake);
          finish(c, lock, wake);
          return true;
        });
  }

  CompletionStage<Boolean> forceRelease(String name) {
    return transactions.submit(
        "force release of lock '" + name + "'",
        c -> {
          LockRecord lock = loadExisting(c, name);
          if (lock == null) {
            return false;
          }
          keeper.purge(c, lock);
          boolean held = !lock.holders.isEmpty();
          for (LockRecord.Holder holder : lock.holders.values()) {
            keeper.evict(c, lock, holder);
          }
          lock.clearHolders();
          lock.save(c, sql);
          wakeups.publish(c, lock.resource.key, Wakeup.of(Wakeup.ALL));
          return held;
        });
  }

  CompletionStage<Optional<LockInfo>> inspect(String name) {
    return transactions.submit(
        "inspection of lock '" + name + "'",
        c -> {
          LockRecord lock = loadExisting(c, name);
          if (lock == null) {
            return Optional.empty();
          }
          keeper.purge(c, lock);
          lock.save(c, sql);
          return lock.holders.isEmpty() ? Optional.empty() : Optional.of(lock.info());
        });
  }

  private @Nullable LockRecord loadExisting(Connection connection, String name)
      throws SQLException {
    return LockRecord.lockAndLoad(connection, sql, name, false);
  }

  private void markContended(String resourceKey) {
    if (contended.size() >= CONTENDED_KEYS) {
      contended.clear();
    }
    contended.add(resourceKey);
  }

  /** After the general path: the uncontended path is tried again once nobody is queued. */
  private void noteQueue(LockRecord lock) {
    if (uncontended != null && lock.queue.isEmpty()) {
      contended.remove(lock.resource.key);
    }
  }

  /** Writes what changed and sends the wake-ups: the operation's last statements. */
  private void finish(Connection connection, LockRecord lock, List<String> wake)
      throws SQLException {
    Writes writes = lock.writes(sql);
    for (String owner : wake) {
      wakeups.publish(writes, connection, lock.resource.key, Wakeup.forOwner(owner));
    }
    writes.runAndCommit(connection);
  }

  static ResourceRow requireRow(@Nullable ResourceRow row) {
    if (row == null) {
      throw new IllegalStateException("a resource row asked to be created was not");
    }
    return row;
  }

  private static LockRecord requireRecord(@Nullable LockRecord lock) {
    if (lock == null) {
      throw new IllegalStateException("a resource row asked to be created was not");
    }
    return lock;
  }
}
