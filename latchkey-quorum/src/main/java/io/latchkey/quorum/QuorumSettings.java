package io.latchkey.quorum;

import java.time.Duration;

/**
 * The tunables of a quorum, checked once.
 *
 * @param maxLease the longest lease a grant may have; a member that restarted without its data is
 *     quarantined (does not count towards a majority) for this long, and longer leases are refused
 * @param driftFactor the part of a lease subtracted from a grant's validity for clock drift between
 *     the members and this client
 * @param driftFixed the fixed part of the drift allowance (the members count in whole milliseconds)
 * @param memberTimeout how long one round of calls waits for the members before counting those that
 *     did not answer as failed; zero for the default: 40% of the client's operation timeout for
 *     each of an acquire's two rounds (the attempt and the fence write-back), 80% for operations of
 *     one round, so that every operation answers within that timeout
 * @param retryDelay the most a refused split vote tells the engine to wait before trying again; the
 *     delay is random below it so that competing clients do not split the members again
 */
record QuorumSettings(
    Duration maxLease,
    double driftFactor,
    Duration driftFixed,
    Duration memberTimeout,
    Duration retryDelay) {
  /** The default longest lease, and quarantine of a member that restarted empty: one minute. */
  static final Duration DEFAULT_MAX_LEASE = Duration.ofMinutes(1);

  /** Redlock's drift allowance: 1% of the lease plus 2 ms. */
  static final double DEFAULT_DRIFT_FACTOR = 0.01;

  static final Duration DEFAULT_DRIFT_FIXED = Duration.ofMillis(2);

  /** A member timeout of zero: derive it from the client's operation timeout. */
  static final Duration DERIVED = Duration.ZERO;

  static final Duration DEFAULT_RETRY_DELAY = Duration.ofMillis(50);

  static QuorumSettings defaults() {
    return new QuorumSettings(
        DEFAULT_MAX_LEASE, DEFAULT_DRIFT_FACTOR, DEFAULT_DRIFT_FIXED, DERIVED, DEFAULT_RETRY_DELAY);
  }

  QuorumSettings {
    requirePositive("maxLease", maxLease);
    if (!(driftFactor >= 0 && driftFactor < 0.5)) {
      throw new IllegalArgumentException(
          "driftFactor must be at least 0 and below 0.5 (a part of the lease), was " + driftFactor);
    }
    if (driftFixed.isNegative()) {
      throw new IllegalArgumentException("driftFixed must not be negative, was " + driftFixed);
    }
    if (memberTimeout.isNegative()) {
      throw new IllegalArgumentException(
          "memberTimeout must be positive (or zero for the default), was " + memberTimeout);
    }
    requirePositive("retryDelay", retryDelay);
  }

  private static void requirePositive(String what, Duration value) {
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(what + " must be positive, was " + value);
    }
  }

  /**
   * @param leaseMillis a lease
   * @return the drift allowance for it: {@code driftFactor × lease + driftFixed}
   */
  long driftMillis(long leaseMillis) {
    return (long) Math.ceil(leaseMillis * driftFactor) + driftFixed.toMillis();
  }

  /**
   * @param operationTimeout the client's bound on each operation
   * @return the bound on one round of member calls
   */
  long memberTimeoutMillis(Duration operationTimeout) {
    return bound(operationTimeout.toMillis() * 2 / 5);
  }

  /**
   * @param operationTimeout the client's bound on each operation
   * @return the bound on the round of an operation that is one round (release, renewal, the
   *     operator's calls): 80% of the operation timeout, or the member timeout if shorter
   */
  long roundTimeoutMillis(Duration operationTimeout) {
    return bound(operationTimeout.toMillis() * 4 / 5);
  }

  private long bound(long derived) {
    long atLeastOne = Math.max(1, derived);
    return memberTimeout.isZero() ? atLeastOne : Math.min(memberTimeout.toMillis(), atLeastOne);
  }
}
