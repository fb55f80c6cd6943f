package io.latchkey.redis;

import java.time.Duration;

/**
 * How many replicas must acknowledge a grant before it counts ({@code WAIT replicas timeout} after
 * the grant), from the URI options {@code waitReplicas} and {@code waitTimeout}.
 *
 * @param replicas the replicas that must acknowledge; 0 does not wait
 * @param timeout how long to wait for them
 */
record ReplicaWait(int replicas, Duration timeout) {
  /** Do not wait for replicas: the default. */
  static final ReplicaWait NONE = new ReplicaWait(0, RedisConnectionSettings.DEFAULT_WAIT_TIMEOUT);

  boolean enabled() {
    return replicas > 0;
  }
}
