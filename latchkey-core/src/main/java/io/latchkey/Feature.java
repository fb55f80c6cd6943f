package io.latchkey;

/**
 * Optional capabilities a backend declares. Reentrant exclusive locks with fencing tokens are not
 * optional: every backend has them. A backend without a feature refuses what needs it at once with
 * {@link UnsupportedFeatureException}, naming the backend and the feature.
 */
public enum Feature {
  /** First-come first-served locks with a wait queue whose dead entries time out. */
  FAIR_LOCK,
  /** Shared (read) holds beside exclusive (write) holds on one lock name. */
  READ_WRITE_LOCK,
  /** Counting semaphores without owners. */
  SEMAPHORE,
  /** Semaphores whose permits each have an id and a lease. */
  LEASED_SEMAPHORE,
  /** Count-down latches. */
  COUNT_DOWN_LATCH,
  /**
   * Semaphore, leased semaphore and latch records can be deleted and tested for existence ({@code
   * delete()}, {@code isExists()}), and a semaphore released only while its record exists ({@link
   * DistributedSemaphore#releaseIfExists(int)}).
   */
  DELETE_RECORDS,
  /**
   * A semaphore's permits can be drained ({@link DistributedSemaphore#drainPermits()}) and set
   * unconditionally ({@link DistributedSemaphore#setPermits(int)}).
   */
  DRAIN_AND_SET_PERMITS,
  /**
   * A leased semaphore grants and releases several permits in one atomic step, all or none ({@link
   * LeasedSemaphore#acquire(int, java.time.Duration)}, {@link
   * LeasedSemaphore#release(java.util.List)}).
   */
  PERMIT_BATCHES,
  /**
   * A held permit of a leased semaphore can be given a new lease time, shorter or longer ({@link
   * LeasedSemaphore#updateLeaseTime(String, java.time.Duration)}).
   */
  PERMIT_LEASE_UPDATE,
  /**
   * The operator's tools also show semaphores, leased semaphores (with each permit's holder and
   * lease) and latches ({@link LockAdmin#inspectSemaphore(String)} and the like); needs {@link
   * #ADMIN} as well.
   */
  SYNCHRONIZER_INSPECTION,
  /**
   * Explicit lease times ({@code acquire(wait, leaseTime)}): the backend expires a grant by its own
   * clock when the lease runs out, whether or not the client is alive. Backends whose holds live as
   * long as a connection or session (advisory locks, ZooKeeper) lack it. It does not cover leased
   * semaphores' permits, which {@link #PERMIT_LEASE_TIME} does.
   */
  LEASE_TIME,
  /**
   * Explicit lease times on a leased semaphore's permits ({@code acquire(wait, leaseTime)}, {@link
   * LeasedSemaphore#tryAcquire(java.time.Duration)}): the backend frees a permit by its own clock
   * when its lease runs out, whether or not the client is alive. Every backend with {@link
   * #LEASE_TIME} and {@link #LEASED_SEMAPHORE} has it; a backend whose locks live on a session may
   * have it for permits alone (ZooKeeper, where the server enables TTL nodes).
   */
  PERMIT_LEASE_TIME,
  /**
   * An {@link OwnerToken} works from another process: the backend keeps hold counts by owner, so an
   * RPC callee holding the caller's token re-enters and releases the caller's grant. Without it a
   * token re-enters only grants this client made.
   */
  REMOTE_OWNER_TOKENS,
  /**
   * Holds live on one connection or session of this client (PostgreSQL advisory locks, {@code
   * SELECT ... FOR UPDATE}, ZooKeeper ephemeral nodes): the backend frees them when it drops, and
   * reports suspended and lost connections as lease events.
   */
  CONNECTION_BOUND_HOLDS,
  /**
   * Releases push wake-ups to waiting clients. Without it, waiters re-check with a jittered
   * back-off.
   */
  WAKEUP_PUSH,
  /** A refused attempt can say when to retry (a watch on the node ahead, as in ZooKeeper). */
  WAKEUP_WATCH,
  /**
   * The operator's tools ({@link LockAdmin}): inspect and list held locks, force-release, evict one
   * holder.
   */
  ADMIN,
  /**
   * Every client keeps a presence record that dies with it, so that {@link LockAdmin#clients()}
   * lists the live clients and a monitor can tell holders of dead clients.
   */
  PRESENCE,
  /**
   * Cooperative revocation: any client can ask the holders of a lock to give it up ({@link
   * DistributedLock#requestRevocation()}), and a holder hears the request through {@link
   * Lease#onRevocationRequested}. Nothing is taken from a holder: it decides whether to release.
   */
  REVOCATION
}
