package io.latchkey.reactor;

import io.latchkey.DistributedLock;
import reactor.core.publisher.Mono;

/**
 * The Reactor form of a {@link DistributedLock}. Reactive code hops threads, so hold the lock
 * through a {@link io.latchkey.Lease} ({@link #acquire}, {@link #withLease}) or bind it to an
 * {@linkplain DistributedLock#withOwner owner token} before wrapping it: a thread-owned lock
 * belongs to whichever thread subscribes.
 */
public final class ReactiveLock extends ReactiveLeaseSource {
  private final DistributedLock lock;

  ReactiveLock(DistributedLock lock) {
    super(lock);
    this.lock = lock;
  }

  /**
   * {@link DistributedLock#unlockAsync()} as a {@code Mono}: undoes one hold of the lock's owner
   * (its owner token, or for a thread-owned lock the thread that subscribes).
   *
   * @return completes when one hold is released
   */
  public Mono<Void> unlock() {
    return Reactive.fromStage(lock::unlockAsync, nothing -> {});
  }
}
