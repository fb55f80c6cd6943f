package io.latchkey.internal;

import io.latchkey.Lease;
import io.latchkey.LeaseListener;
import io.latchkey.LeaseLostException;
import io.latchkey.LockMode;
import io.latchkey.spi.ResourceType;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Consumer;

/** One grant on a {@link Hold}; releasing it undoes exactly that grant. */
final class HoldLease implements Lease {
  private final LatchkeyClient client;
  private final Hold hold;
  private final LockMode mode;
  private static final AtomicIntegerFieldUpdater<HoldLease> RELEASED =
      AtomicIntegerFieldUpdater.newUpdater(HoldLease.class, "released");
  // 1 once released (a field, not an AtomicBoolean: one object fewer per grant).
  private volatile int released;

  HoldLease(LatchkeyClient client, Hold hold, LockMode mode) {
    this.client = client;
    this.hold = hold;
    this.mode = mode;
  }

  @Override
  public String name() {
    return hold.ref.name();
  }

  @Override
  public String holderId() {
    return hold.ref.holderId();
  }

  @Override
  public long fencingToken() {
    return hold.fencingToken();
  }

  @Override
  public boolean isValid() {
    return released == 0 && client.ledger().isValid(hold);
  }

  @Override
  public Duration remaining() {
    return isValid() ? client.ledger().remaining(hold) : Duration.ZERO;
  }

  @Override
  public void release() {
    Blocking.join(releaseAsync().toCompletableFuture());
  }

  @Override
  public CompletionStage<Void> releaseAsync() {
    if (!RELEASED.compareAndSet(this, 0, 1)) {
      return CompletableFuture.failedFuture(
          new IllegalStateException("the lease of " + describe() + " was already released"));
    }
    return client.toCaller(client.ledger().release(hold, mode));
  }

  @Override
  public void close() {
    release();
  }

  @Override
  public void onLost(Consumer<LeaseLostException> listener) {
    Objects.requireNonNull(listener, "listener must not be null");
    client
        .ledger()
        .addListener(
            hold,
            new LeaseListener() {
              @Override
              public void lost(LeaseLostException reason) {
                listener.accept(reason);
              }
            });
  }

  @Override
  public void addListener(LeaseListener listener) {
    Objects.requireNonNull(listener, "listener must not be null");
    client.ledger().addListener(hold, listener);
  }

  @Override
  public void onRevocationRequested(Consumer<? super Lease> handler) {
    Objects.requireNonNull(handler, "handler must not be null");
    if (hold.ref.type() != ResourceType.LOCK) {
      throw new UnsupportedOperationException(
          "only the leases of locks take revocation requests; this is the lease of a "
              + describe());
    }
    client.revocations().awaitListening();
    client
        .ledger()
        .onRevocationRequested(
            hold,
            () -> {
              if (released == 0) {
                handler.accept(this);
              }
            });
  }

  @Override
  public boolean isRevocationRequested() {
    return hold.isRevocationRequested();
  }

  private String describe() {
    return hold.ref.type().name().toLowerCase(java.util.Locale.ROOT) + " '" + name() + "'";
  }

  @Override
  public String toString() {
    return "Lease[" + describe() + ", token=" + fencingToken() + ", valid=" + isValid() + "]";
  }
}
