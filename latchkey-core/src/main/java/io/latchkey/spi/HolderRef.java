package io.latchkey.spi;

import java.util.Objects;

/**
 * Identifies one holder's lease: a lock owner on a lock name, or a permit id on a leased semaphore.
 *
 * @param type {@link ResourceType#LOCK} or {@link ResourceType#LEASED_SEMAPHORE}
 * @param name the resource name
 * @param holderId the owner id or permit id
 */
public record HolderRef(ResourceType type, String name, String holderId) {
  /** Checks the components. */
  public HolderRef {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(holderId, "holderId");
  }
}
