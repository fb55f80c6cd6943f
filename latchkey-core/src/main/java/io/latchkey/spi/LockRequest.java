package io.latchkey.spi;

import io.latchkey.LockMode;
import java.util.Objects;

/**
 * One acquire attempt on a lock record.
 *
 * <p>Grant rules the backend applies atomically, after dropping expired holders and (for fair
 * requests) queue entries past their deadline:
 *
 * <ul>
 *   <li>EXCLUSIVE: granted if there are no holders, or the only holder is this owner holding
 *       exclusively (a re-entry); refused with {@link AcquireResult.Status#UPGRADE_REFUSED} if this
 *       owner holds only shared holds.
 *   <li>SHARED: granted if there is no exclusive holder other than this owner.
 *   <li>fair: additionally granted only if this owner is at the head of the queue (or the queue is
 *       empty); a refused fair request enters (or stays in) the queue with a deadline of {@code
 *       queueKeepAliveMillis} from now.
 * </ul>
 *
 * A grant adds one hold to this owner in this mode and sets its lease to at least {@code
 * leaseMillis} from now: a re-entry never shortens a lease. A new holder gets the next fencing
 * token of the name; a re-entry keeps its token.
 *
 * @param name the lock name
 * @param owner the owner id
 * @param mode how to hold
 * @param leaseMillis the lease, positive
 * @param fair whether to queue first-come first-served
 * @param queueKeepAliveMillis for fair requests, how long the queue place lasts without a retry
 */
public record LockRequest(
    String name,
    String owner,
    LockMode mode,
    long leaseMillis,
    boolean fair,
    long queueKeepAliveMillis) {
  /** Checks the components. */
  public LockRequest {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(mode, "mode");
    if (leaseMillis <= 0) {
      throw new IllegalArgumentException("leaseMillis must be positive");
    }
  }
}
