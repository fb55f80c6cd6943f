package io.latchkey;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The grant of a {@link MultiLock}: one {@link Lease} per member. Closing it releases every member,
 * even when releasing one of them fails.
 */
public final class MultiLease implements AutoCloseable {
  private final List<Lease> leases;

  MultiLease(List<Lease> leases) {
    this.leases = List.copyOf(leases);
  }

  /**
   * @return the members' leases, in the order they were acquired
   */
  public List<Lease> leases() {
    return leases;
  }

  /**
   * @return true while every member's lease is valid
   */
  public boolean isValid() {
    return leases.stream().allMatch(Lease::isValid);
  }

  /**
   * Releases every member in reverse order of acquisition.
   *
   * @throws LeaseLostException if any member's lease was lost (the others are still released;
   *     further failures are attached as suppressed exceptions)
   */
  public void release() {
    MultiLock.releaseAll(leases);
  }

  /**
   * Asynchronous {@link #release()}: releases every member at once.
   *
   * @return completes when every member is released, or exceptionally with the first failure (after
   *     all were tried)
   */
  public CompletionStage<Void> releaseAsync() {
    List<CompletableFuture<Void>> releases = new ArrayList<>(leases.size());
    for (Lease lease : leases) {
      releases.add(lease.releaseAsync().toCompletableFuture());
    }
    return CompletableFuture.allOf(releases.toArray(new CompletableFuture<?>[0]));
  }

  /** Same as {@link #release()}. */
  @Override
  public void close() {
    release();
  }
}
