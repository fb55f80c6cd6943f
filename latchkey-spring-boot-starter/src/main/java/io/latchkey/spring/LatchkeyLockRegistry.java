package io.latchkey.spring;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import java.util.Objects;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Spring Integration's {@link LockRegistry} over latchkey: {@link #obtain(Object)} returns the
 * reentrant distributed lock named by the key ({@code String.valueOf(key)}) after an optional
 * prefix. The locks are {@link java.util.concurrent.locks.Lock}s owned by the calling thread, with
 * leases kept alive by latchkey's watchdog while they are held.
 */
public final class LatchkeyLockRegistry implements LockRegistry<DistributedLock> {
  private final Latchkey latchkey;
  private final String prefix;

  /**
   * @param latchkey the client
   * @param prefix put before every key, e.g. {@code integration/}; may be empty
   */
  public LatchkeyLockRegistry(Latchkey latchkey, String prefix) {
    this.latchkey = Objects.requireNonNull(latchkey, "latchkey must not be null");
    this.prefix = Objects.requireNonNull(prefix, "prefix must not be null");
  }

  @Override
  public DistributedLock obtain(Object lockKey) {
    Objects.requireNonNull(lockKey, "lockKey must not be null");
    return latchkey.lock(prefix + lockKey);
  }

  @Override
  public String toString() {
    return "LatchkeyLockRegistry[" + latchkey.backendDescription() + ", prefix '" + prefix + "']";
  }
}
