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
}
