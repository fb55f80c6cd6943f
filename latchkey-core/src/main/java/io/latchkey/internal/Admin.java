package io.latchkey.internal;

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
}
