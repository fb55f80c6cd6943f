package io.latchkey.internal;

import io.latchkey.DistributedMutex;
import io.latchkey.Feature;
import io.latchkey.Lease;
import io.latchkey.LockMode;
import io.latchkey.OwnerToken;
import io.latchkey.Primitive;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.ResourceType;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * A non-reentrant mutex: each acquire is a fresh owner token, so the backend sees every acquire as
 * a different owner and a second acquire waits even on the holding thread.
 */
final class MutexHandle extends LeaseIssuingHandle implements DistributedMutex {
  private final String name;

  MutexHandle(LatchkeyClient client, String name) {
    super(client);
    this.name = name;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  CompletableFuture<@Nullable Lease> start(long waitNanos, @Nullable Duration leaseTime) {
    return client.acquireLock(
        Primitive.MUTEX,
        new HolderRef(ResourceType.LOCK, name, OwnerToken.random().value()),
        LockMode.EXCLUSIVE,
        false,
        waitNanos,
        leaseTime);
  }

  @Override
  public Optional<Lease> tryAcquire() {
    return Optional.ofNullable(tryOnce(null));
  }

  @Override
  public boolean isLocked() {
    client.require(Feature.ADMIN);
    return Blocking.join(
            client
                .calls()
                .call(
                    () -> "inspect mutex '" + name + "'",
                    () -> client.backend().admin().inspect(name)))
        .isPresent();
  }

  @Override
  public boolean forceUnlock() {
    return new Admin(client).forceRelease(name);
  }

  @Override
  public boolean requestRevocation() {
    return client.revocations().request("mutex", name);
  }

  @Override
  String what() {
    return "acquire mutex '" + name + "'";
  }

  @Override
  public String toString() {
    return "Mutex['" + name + "' on " + client.backendDescription() + "]";
  }
}
