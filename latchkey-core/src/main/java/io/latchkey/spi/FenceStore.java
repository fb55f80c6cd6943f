package io.latchkey.spi;

import java.util.concurrent.CompletionStage;

/**
 * Numbers a backend keeps that only grow, on which a quorum of independent backends
 * (latchkey-quorum, docs/adr/0009-quorum-fencing.md) builds fencing tokens that keep growing when
 * members die, restart empty or are replaced, and its restart rule. Optional: a backend offers it
 * through {@link LatchkeyBackend#fences()}; nothing else in latchkey needs it.
 *
 * <p>Both operations are atomic steps like every SPI operation, applied at most once. Raising is
 * idempotent, so a raise whose answer was lost may be sent again as a new call.
 */
public interface FenceStore {
  /**
   * Raises the fencing counter of the lock {@code name} (the one {@link LockStore#tryAcquire}
   * counts up for every new holder) to at least {@code atLeast}, never lowering it: the next new
   * holder gets a larger token.
   *
   * @param name the lock name
   * @param atLeast the lowest value the counter may have afterwards, not negative
   * @return the counter after the call
   */
  CompletionStage<Long> raiseLockFence(String name, long atLeast);

  /**
   * Reads and raises the backend's epoch record: one number for the whole backend that lives as
   * long as its data (a server restarted without its data has none). If there is no record and
   * {@code atLeast} is positive, creates it and, if {@code quarantineMillis} is positive, a
   * quarantine marker that the backend's clock expires after that many milliseconds; an existing
   * record is raised to {@code atLeast} and its marker left alone. {@code epoch(0, 0)} only reads.
   *
   * @param atLeast the lowest value the record may have afterwards (0 for none), not negative
   * @param quarantineMillis how long a record created now stays quarantined, not negative
   * @return the record after the call
   */
  CompletionStage<Epoch> epoch(long atLeast, long quarantineMillis);

  /**
   * A backend's epoch record.
   *
   * @param value the epoch, 0 if the backend has no record (it is empty: new, or restarted without
   *     its data)
   * @param quarantineMillis how long the record's quarantine marker still lives by the backend's
   *     clock, 0 if it has none
   */
  record Epoch(long value, long quarantineMillis) {
    /** Checks the components. */
    public Epoch {
      if (value < 0 || quarantineMillis < 0) {
        throw new IllegalArgumentException(
            "an epoch record is not negative: value " + value + ", quarantine " + quarantineMillis);
      }
    }

    /**
     * @return true if the backend has no epoch record (its data is new)
     */
    public boolean isEmpty() {
      return value == 0;
    }

    /**
     * @return true if the record's quarantine marker still lives
     */
    public boolean isQuarantined() {
      return quarantineMillis > 0;
    }
  }
}
