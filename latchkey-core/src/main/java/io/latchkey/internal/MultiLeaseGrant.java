package io.latchkey.internal;

import io.latchkey.Lease;
import io.latchkey.MultiLease;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** The grant of a multi-lock: one lease per member, in acquisition order. */
final class MultiLeaseGrant implements MultiLease {
  private final List<Lease> leases;

  MultiLeaseGrant(List<Lease> leases) {
    this.leases = List.copyOf(leases);
  }

  @Override
  public List<Lease> leases() {
    return leases;
  }

  @Override
  public boolean isValid() {
    return leases.stream().allMatch(Lease::isValid);
  }

  @Override
  public void release() {
    MultiLockHandle.releaseAll(leases);
  }

  @Override
  public CompletionStage<Void> releaseAsync() {
    List<CompletableFuture<Void>> releases = new ArrayList<>(leases.size());
    for (Lease lease : leases) {
      releases.add(lease.releaseAsync().toCompletableFuture());
    }
    return CompletableFuture.allOf(releases.toArray(new CompletableFuture<?>[0]));
  }

  @Override
  public void close() {
    release();
  }
}
