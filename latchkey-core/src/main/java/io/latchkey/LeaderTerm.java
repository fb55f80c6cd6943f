package io.latchkey;

/** One term of a leader: from its election until it leaves, steps down or loses its lease. */
public interface LeaderTerm {
  /**
   * @return the election's name
   */
  String electionName();

  /**
   * @return the participant that leads in this term
   */
  String participantId();

  /**
   * @return the fencing token of the term: it grows with every term of the election (and every
   *     grant of its lock)
   */
  long fencingToken();

  /**
   * @return true while the term lasts and its lease is valid, as far as this client knows; check it
   *     (and pass the fencing token to the resource) before acting as the leader
   */
  boolean isValid();
}
