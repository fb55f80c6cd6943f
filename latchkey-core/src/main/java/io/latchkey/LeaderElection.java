package io.latchkey;

import java.time.Duration;
import java.util.Optional;

/**
 * One participant of a leader election: among every participant that joined the election of one
 * name (in any process, on the same backend), at most one is the leader at a time. Get one with
 * {@link Latchkey#joinElection(String, LeadershipListener)}; close it to leave.
 *
 * <p>The leader is whoever holds the lock of the election's name, taken by the participant's own
 * {@linkplain #participantId() owner} and kept alive by the client's watchdog. So leadership ends
 * as that lock's lease does, loudly: when the leader {@linkplain #close() leaves} (the lock is
 * released and the next participant is elected at once), when its process dies or stalls (the lease
 * runs out, then the next is elected), or when the lease is lost (force-released, renewal failed):
 * the {@linkplain LeadershipListener#ended listeners} hear it and {@link #isLeader()} turns false.
 * A participant that lost leadership competes again by itself until it is closed.
 *
 * <p>Every term has a {@linkplain LeaderTerm#fencingToken() fencing token} that grows with every
 * term of the election: a resource that refuses tokens lower than the highest it has seen cannot be
 * written by a leader whose term ended without it noticing (a long pause).
 *
 * <p>Two styles: a {@link LeadershipListener} (callbacks on the client's callback executor), or
 * asking {@link #isLeader()} and waiting with {@link #awaitLeadership(Duration)}. With {@link
 * Feature#REVOCATION}, a leader asked to give up its lock ({@code latchkey revoke NAME}) steps
 * down: it releases the lock, which hands leadership to the next participant, and competes again.
 */
public interface LeaderElection extends AutoCloseable {
  /**
   * @return the election's name, which is also the name of its lock
   */
  String name();

  /**
   * @return this participant's id: the owner of the election's lock while it leads (as {@link
   *     LockAdmin#inspect} shows it)
   */
  String participantId();

  /**
   * @return true while this participant leads and its lease is valid (false while the lease is in
   *     doubt, see {@link LeaseListener#suspended})
   */
  boolean isLeader();

  /**
   * @return the current term if this participant leads, else empty
   */
  Optional<LeaderTerm> currentTerm();

  /**
   * Waits until this participant leads.
   *
   * @param wait how long to wait at most; zero does not wait
   * @return the term, or empty if this participant was not elected in time (or was closed)
   * @throws InterruptedException if interrupted while waiting
   */
  Optional<LeaderTerm> awaitLeadership(Duration wait) throws InterruptedException;

  /**
   * Leaves the election. A leader releases its lock, which hands leadership to the next participant
   * at once, and its listeners hear that its term ended (without a loss). Idempotent.
   */
  @Override
  void close();
}
