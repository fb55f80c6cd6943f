/**
 * latchkey-core: the latchkey API ({@code io.latchkey}), the backend SPI ({@code io.latchkey.spi})
 * and the in-memory reference backend ({@code io.latchkey.memory}). The engine ({@code
 * io.latchkey.internal}) is not exported.
 *
 * <p>Backends are found with {@link java.util.ServiceLoader} as {@link
 * io.latchkey.spi.BackendProvider}s, on the module path and on the class path alike.
 */
module io.latchkey {
  requires org.slf4j;
  // The nullness annotations are part of the exported API (type-use @Nullable): readers of this
  // module see them when they compile; nothing needs them at run time.
  requires static transitive org.jspecify;

  exports io.latchkey;
  exports io.latchkey.spi;
  exports io.latchkey.memory;

  uses io.latchkey.spi.BackendProvider;

  provides io.latchkey.spi.BackendProvider with
      io.latchkey.memory.MemoryBackendProvider;
}
