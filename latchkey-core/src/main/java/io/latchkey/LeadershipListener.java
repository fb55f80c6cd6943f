package io.latchkey;

import org.jspecify.annotations.Nullable;

/**
 * Hears the terms of one {@link LeaderElection} participant. Both methods have empty defaults. They
 * run on the client's {@linkplain LatchkeyOptions#callbackExecutor() callback executor}, never on
 * latchkey's own threads, one call at a time per participant and in order: every {@link #elected}
 * is followed by exactly one {@link #ended} for the same term.
 */
public interface LeadershipListener {
  /**
   * This participant became the leader.
   *
   * @param term the new term
   */
  default void elected(LeaderTerm term) {}

  /**
   * This participant's term ended: it left the election, stepped down on a revocation request, or
   * lost the lease of the election's lock. Stop acting as the leader.
   *
   * @param term the term that ended
   * @param lost the loss, or null if the term ended because this participant gave it up
   */
  default void ended(LeaderTerm term, @Nullable LeaseLostException lost) {}
}
