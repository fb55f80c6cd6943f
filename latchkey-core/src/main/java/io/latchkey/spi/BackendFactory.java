package io.latchkey.spi;

/** Opens a backend for one client; what {@link io.latchkey.Latchkey#using} takes. */
@FunctionalInterface
public interface BackendFactory {
  /**
   * @param context the client's identity and bounds
   * @return an open backend, owned (and closed) by the client
   */
  LatchkeyBackend open(BackendContext context);
}
