package io.latchkey.internal;

import io.latchkey.ClientInfo;
import io.latchkey.Feature;
import io.latchkey.LockAdmin;
import io.latchkey.LockInfo;
import java.util.List;
import java.util.Optional;

/** The monitor's operations, each one bounded backend call. */
final class Admin implements LockAdmin {
  private final LatchkeyClient client;

  Admin(LatchkeyClient client) {
    this.client = client;
  }

  @Override
  public List<LockInfo> list() {
    client.require(Feature.INSPECTION);
    return Blocking.join(
        client.calls().call(() -> "list locks", () -> client.backend().locks().list()));
  }

  @Override
  public Optional<LockInfo> inspect(String name) {
    Arguments.name("lock", name);
    return Blocking.join(
        client
            .calls()
            .call(
                () -> "inspect lock '" + name + "'", () -> client.backend().locks().inspect(name)));
  }

  @Override
  public boolean forceRelease(String name) {
    Arguments.name("lock", name);
    return Blocking.join(
        client
            .calls()
            .call(
                () -> "force-release lock '" + name + "'",
                () -> client.backend().locks().forceRelease(name)));
  }

  @Override
  public boolean evict(String name, String owner) {
    Arguments.name("lock", name);
    java.util.Objects.requireNonNull(owner, "owner must not be null");
    return Blocking.join(
        client
            .calls()
            .call(
                () -> "evict an owner of lock '" + name + "'",
                () -> client.backend().locks().evict(name, owner)));
  }

  @Override
  public List<ClientInfo> clients() {
    client.require(Feature.INSPECTION);
    return Blocking.join(
        client.calls().call(() -> "list clients", () -> client.backend().locks().clients()));
  }
}
