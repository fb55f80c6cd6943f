package io.latchkey.testkit.faults;

/** Which primitive the workers of a {@link FaultRun} take, and how its lease is kept. */
public enum FaultMode {
  /** {@code lock(name).acquire(wait)}: the client's watchdog renews the lease. */
  WATCHDOG_LOCK(false),
  /** {@code lock(name).acquire(wait, lease)}: the lease runs out after its time, never renewed. */
  EXPLICIT_LEASE_LOCK(true),
  /** {@code fairLock(name).acquire(wait)}, renewed by the watchdog. */
  FAIR_LOCK(false),
  /**
   * {@code leasedSemaphore(name)} with one permit, {@code acquire(wait)}, renewed by the watchdog.
   */
  LEASED_SEMAPHORE(false),
  /**
   * {@code leasedSemaphore(name)} with one permit, {@code acquire(wait, lease)}: the permit runs
   * out after its lease, never renewed, and the backend frees it by itself (ZooKeeper: a TTL node
   * that the server deletes, up to {@link ServerControl#explicitPermitReapDelay()} late).
   */
  EXPLICIT_LEASE_SEMAPHORE(true);

  private final boolean explicitLease;

  FaultMode(boolean explicitLease) {
    this.explicitLease = explicitLease;
  }

  /**
   * @return true if a grant runs out after the lease time whatever happens (no renewal), so that an
   *     overlap starting after it is explained by the clock alone
   */
  public boolean explicitLease() {
    return explicitLease;
  }
}
