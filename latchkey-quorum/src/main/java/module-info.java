/**
 * latchkey-quorum: one lock over N independent member backends of any kind (Redlock generalised),
 * found by {@link java.util.ServiceLoader} as the provider of the {@code quorum:} scheme. Member
 * URIs are opened by the providers of their own schemes, so the member modules (latchkey-redis,
 * ...) must be on the module or class path too.
 */
module io.latchkey.quorum {
  requires transitive io.latchkey;
  requires static org.jspecify;

  exports io.latchkey.quorum;

  uses io.latchkey.spi.BackendProvider;

  provides io.latchkey.spi.BackendProvider with
      io.latchkey.quorum.QuorumBackendProvider;
}
