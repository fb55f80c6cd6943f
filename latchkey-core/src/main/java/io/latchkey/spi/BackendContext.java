package io.latchkey.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * What the engine tells a backend when it opens it.
 *
 * @param clientId the client's random id; the backend records it with each grant so that monitors
 *     can tell which client holds what
 * @param operationTimeout the bound the engine puts on each operation; a client library's own
 *     timeouts should not be shorter
 * @param leaseTime the watchdog lease, for backends that keep a presence record of their own
 */
public record BackendContext(String clientId, Duration operationTimeout, Duration leaseTime) {
  /** Checks the components. */
  public BackendContext {
    Objects.requireNonNull(clientId, "clientId");
    Objects.requireNonNull(operationTimeout, "operationTimeout");
    Objects.requireNonNull(leaseTime, "leaseTime");
  }
}
