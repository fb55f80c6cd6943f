package io.latchkey;

import java.time.Instant;
import java.util.Objects;

/**
 * A latchkey client that is alive on a backend, as its presence record says. A lock holder whose
 * {@link HolderInfo#clientId()} is not among the live clients belongs to a process that died or was
 * cut off; its lock frees when its lease runs out, or at once with {@link LockAdmin#evict}.
 *
 * @param clientId the client's random id
 * @param host the host name of the client's machine
 * @param pid the client's process id
 * @param startedAt when the client connected
 */
public record ClientInfo(String clientId, String host, long pid, Instant startedAt) {
  /** Checks the components. */
  public ClientInfo {
    Objects.requireNonNull(clientId, "clientId");
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(startedAt, "startedAt");
  }
}
