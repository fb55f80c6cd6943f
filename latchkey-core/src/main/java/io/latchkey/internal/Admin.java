package io.latchkey.internal;

import io.latchkey.ClientInfo;
import io.latchkey.Feature;
import io.latchkey.LatchInfo;
import io.latchkey.LeasedSemaphoreInfo;
import io.latchkey.LockAdmin;
import io.latchkey.LockInfo;
import io.latchkey.SemaphoreInfo;
import io.latchkey.spi.AdminStore;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/** The monitor's operations, each one bounded backend call. */
final class Admin implements LockAdmin {
  private final LatchkeyClient client;

  Admin(LatchkeyClient client) {
    this.client = client;
  }

  @Override
  public List<LockInfo> list() {
    client.require(Feature.ADMIN);
    return Blocking.join(
        client.calls().call(() -> "list locks", () -> client.backend().admin().list()));
  }

  @Override
  public Optional<LockInfo> inspect(String name) {
    Arguments.name("lock", name);
    client.require(Feature.ADMIN);
    return Blocking.join(
        client
            .calls()
            .call(
                () -> "inspect lock '" + name + "'", () -> client.backend().admin().inspect(name)));
  }

  @Override
  public boolean forceRelease(String name) {
    Arguments.name("lock", name);
    client.require(Feature.ADMIN);
    return Blocking.join(
        client
            .calls()
            .call(
                () -> "force-release lock '" + name + "'",
                () -> client.backend().admin().forceRelease(name)));
  }

  @Override
  public boolean evict(String name, String owner) {
    Arguments.name("lock", name);
    java.util.Objects.requireNonNull(owner, "owner must not be null");
    client.require(Feature.ADMIN);
    return Blocking.join(
        client
            .calls()
            .call(
                () -> "evict an owner of lock '" + name + "'",
                () -> client.backend().admin().evict(name, owner)));
  }

  @Override
  public List<ClientInfo> clients() {
    client.require(Feature.ADMIN);
    client.require(Feature.PRESENCE);
    return Blocking.join(
        client.calls().call(() -> "list clients", () -> client.backend().admin().clients()));
  }

  @Override
  public Optional<SemaphoreInfo> inspectSemaphore(String name) {
    Arguments.name("semaphore", name);
    return inspection("inspect semaphore '" + name + "'", admin -> admin.inspectSemaphore(name));
  }

  @Override
  public Optional<LeasedSemaphoreInfo> inspectLeasedSemaphore(String name) {
    Arguments.name("semaphore", name);
    return inspection(
        "inspect leased semaphore '" + name + "'", admin -> admin.inspectLeasedSemaphore(name));
  }

  @Override
  public Optional<LatchInfo> inspectLatch(String name) {
    Arguments.name("latch", name);
    return inspection("inspect latch '" + name + "'", admin -> admin.inspectLatch(name));
  }

  @Override
  public List<SemaphoreInfo> listSemaphores() {
    return inspection("list semaphores", AdminStore::listSemaphores);
  }

  @Override
  public List<LeasedSemaphoreInfo> listLeasedSemaphores() {
    return inspection("list leased semaphores", AdminStore::listLeasedSemaphores);
  }

  @Override
  public List<LatchInfo> listLatches() {
    return inspection("list latches", AdminStore::listLatches);
  }

  /** One inspection of semaphores or latches: both features checked, one bounded call. */
  private <T> T inspection(String what, Function<AdminStore, CompletionStage<T>> call) {
    client.require(Feature.ADMIN);
    return client.callNeeding(
        Feature.SYNCHRONIZER_INSPECTION, () -> what, () -> call.apply(client.backend().admin()));
  }
}
