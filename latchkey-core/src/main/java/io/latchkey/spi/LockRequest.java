package io.latchkey.spi;

import io.latchkey.LockMode;
import java.util.Objects;

/**
 * One acquire attempt on a lock record.
 *
 * <p>Grant rules the backend applies atomically, after dropping expired holders and queue entries
 * past their deadline:
 *
 * <ul>
 *   <li>EXCLUSIVE: granted if there are no holders, or the only holder is this owner holding
 *       exclusively (a re-entry); refused with {@link AcquireResult.Status#UPGRADE_REFUSED} if this
 *       owner holds only shared holds.
 *   <li>SHARED: granted if there is no exclusive holder other than this owner and, unless this
 *       owner already holds the lock in either mode, no queued EXCLUSIVE request is ahead of it:
 *       none in the whole queue if this owner is not queued, none that arrived before it if it is.
 *       Writers are preferred, so a stream of readers cannot starve a waiting writer; an owner that
 *       holds the lock (a reader re-entering, the writer taking the read side) is never held back,
 *       or it would wait for a writer that waits for it. A refused reader's {@code
 *       retryAfterMillis} is then when the writer's queue place ends unless the writer renews it.
 *   <li>fair: a new holder is additionally granted only if this owner is at the head of the wait
 *       queue, or the queue is empty (a re-entry is never queued).
 *   <li>hand-off: a new holder is additionally granted only if no other owner's hand-off is pending
 *       (below), unless both that owner and this request wait for SHARED. A refusal for this reason
 *       carries {@code retryAfterMillis} = the time left of that hand-off.
 * </ul>
 *
 * A grant adds one hold to this owner in this mode, removes the owner from the wait queue, and sets
 * its lease to at least {@code leaseMillis} from now: a re-entry never shortens a lease. A new
 * holder gets the next fencing token of the name; a re-entry keeps its token. A SHARED grant to an
 * owner that was queued wakes the next queued owner if that one waits for SHARED too (it can enter
 * beside this one; a writer cannot).
 *
 * <p>The wait queue. A refused request with {@code queueKeepAliveMillis > 0} enters the queue (or
 * keeps its place) with a deadline that many milliseconds from now, and with the mode of this
 * request; waiters renew it by retrying and leave it with {@link LockStore#leaveQueue}. A place
 * past its deadline counts for nothing, so a dead writer holds readers back for at most {@code
 * queueKeepAliveMillis}. Fair requests are served in queue order; for all requests the queue says
 * whom a release wakes: only its head, so one release costs one retry, however many clients wait. A
 * request with {@code queueKeepAliveMillis == 0} (a {@code tryLock} that will not wait) is not
 * queued.
 *
 * <p>The hand-off (docs/adr/0003-wait-queue-for-every-waiter.md). Every wake-up aimed at a queued
 * owner (a release, {@link LockStore#leaveQueue}, an eviction, a queued reader entering) records
 * that owner and the backend's time T: from then on its hand-off is pending. Any attempt of that
 * owner, granted or refused, ends it (the owner came). While it is pending and less than this
 * request's {@code handoffMillis} old, the lock's next new holder is kept for that owner: other new
 * holders are refused (see the grant rules), fair or not, so a barging client cannot take turn
 * after turn from a waiter that was woken. Once it is {@code handoffMillis} old or more, or the
 * owner lost its place, the owner has missed its turn: the first acquire attempt that finds it so
 * drops the owner from the queue (a paused owner that resumes is not lost: its next attempt queues
 * again, at the tail, or is granted if the lock is free and not kept for another) and wakes the
 * next live head, whose hand-off starts then; if that head is the requesting owner itself, the
 * attempt goes on as its own. So a paused or dead waiter keeps a free lock from the others for at
 * most {@code handoffMillis} after its wake-up, instead of until its place runs out. *
 *
 * @param name the lock name
 * @param owner the owner id
 * @param mode how to hold
 * @param leaseMillis the lease, positive
 * @param fair whether a new holder must be at the head of the queue
 * @param queueKeepAliveMillis how long a refused request's queue place lasts without a retry, or 0
 *     to not queue
 * @param handoffMillis how long a woken waiter keeps the lock's next grant to itself before this
 *     request counts it as having missed its turn, positive
 */
public record LockRequest(
    String name,
    String owner,
    LockMode mode,
    long leaseMillis,
    boolean fair,
    long queueKeepAliveMillis,
    long handoffMillis) {
  /**
   * The hand-off the engine uses with default options, and this class's shorter constructor: far
   * above the time a live waiter needs to answer a wake-up (a pub/sub message and one round trip),
   * far below the default queue keep-alive of 5 s.
   */
  public static final long DEFAULT_HANDOFF_MILLIS = 1_000;

  /** Checks the components. */
  public LockRequest {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(mode, "mode");
    if (leaseMillis <= 0) {
      throw new IllegalArgumentException("leaseMillis must be positive");
    }
    if (handoffMillis <= 0) {
      throw new IllegalArgumentException("handoffMillis must be positive");
    }
  }

  /**
   * A request with the {@linkplain #DEFAULT_HANDOFF_MILLIS default hand-off}.
   *
   * @param name the lock name
   * @param owner the owner id
   * @param mode how to hold
   * @param leaseMillis the lease, positive
   * @param fair whether a new holder must be at the head of the queue
   * @param queueKeepAliveMillis how long a refused request's queue place lasts without a retry, or
   *     0 to not queue
   */
  public LockRequest(
      String name,
      String owner,
      LockMode mode,
      long leaseMillis,
      boolean fair,
      long queueKeepAliveMillis) {
    this(name, owner, mode, leaseMillis, fair, queueKeepAliveMillis, DEFAULT_HANDOFF_MILLIS);
  }
}
