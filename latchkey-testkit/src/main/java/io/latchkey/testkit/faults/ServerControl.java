package io.latchkey.testkit.faults;

import java.time.Duration;
import java.util.Set;

/**
 * What the fault suite needs from a backend's server: where it listens, how to build a client URI
 * for an address (the suite puts a proxy in front of it), and how to crash, restart and pause it.
 * One implementation per backend lives in that backend's tests.
 */
public interface ServerControl {
  /**
   * @return the host the server listens on
   */
  String host();

  /**
   * @return the port the server listens on; the same after {@link #restart()}
   */
  int port();

  /**
   * Builds the URI a client passes to {@code Latchkey.connect} to reach this server at another
   * address, such as a proxy that forwards to it.
   *
   * @param host the host to connect to
   * @param port the port to connect to
   * @return a backend URI, e.g. {@code redis://127.0.0.1:PORT}
   */
  String uriVia(String host, int port);

  /**
   * @return the server faults this backend can inject, a subset of the {@link
   *     FaultKind#serverFault() server faults}
   */
  Set<FaultKind> serverFaults();

  /** Kills the server as a crash would (SIGKILL): no clean shut-down, unpersisted data is lost. */
  void crash();

  /** Starts a crashed server again on the same address and waits until it answers. */
  void restart();

  /**
   * Makes the server stop answering clients for {@code duration} and returns at once; the server
   * answers again by itself afterwards.
   *
   * @param duration how long clients wait
   * @throws UnsupportedOperationException if {@link #serverFaults()} lacks {@link
   *     FaultKind#PAUSE_SERVER}
   */
  void pause(Duration duration);

  /**
   * How long after its lease has run out the server may still keep a permit with an explicit lease
   * that nobody released: zero where the lease's end frees it (a key's expiry, a time compared by
   * every call), the check interval where the server deletes such permits periodically (ZooKeeper's
   * TTL nodes). {@link FaultMode#EXPLICIT_LEASE_SEMAPHORE}'s liveness bound includes it.
   *
   * @return the delay, zero by default
   */
  default Duration explicitPermitReapDelay() {
    return Duration.ZERO;
  }
}
