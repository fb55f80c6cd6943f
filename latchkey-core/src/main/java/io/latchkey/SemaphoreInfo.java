package io.latchkey;

import java.util.Objects;

/**
 * A counting semaphore as the backend sees it, for monitors and administrators.
 *
 * @param name the semaphore name
 * @param availablePermits the permits available now; negative after more were removed than were
 *     free
 */
public record SemaphoreInfo(String name, int availablePermits) {
  /** Checks the components. */
  public SemaphoreInfo {
    Objects.requireNonNull(name, "name");
  }
}
