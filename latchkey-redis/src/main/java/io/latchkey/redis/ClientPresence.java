package io.latchkey.redis;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * A live latchkey client as its presence record in Redis shows it. A client that holds a lock but
 * has no presence record is dead (or cut off from Redis): its locks free themselves when their
 * leases run out, or an administrator may force-release them.
 *
 * @param clientId the client's random id, as in {@link io.latchkey.HolderInfo#clientId()}
 * @param host the host name of the client's machine
 * @param pid the client's operating-system process id
 * @param startedAt when the client connected, by its own clock (for people, not for expiry)
 * @param remaining how long the record lives without another refresh, by the Redis clock
 */
public record ClientPresence(
    String clientId, String host, long pid, Instant startedAt, Duration remaining) {
  /** Checks the components. */
  public ClientPresence {
    Objects.requireNonNull(clientId, "clientId");
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(startedAt, "startedAt");
    Objects.requireNonNull(remaining, "remaining");
  }
}
