package io.latchkey.testkit;

import io.latchkey.memory.MemoryLockServer;
import io.latchkey.spi.BackendFactory;
import java.util.EnumSet;
import java.util.Set;

/** The in-memory reference backend runs the whole kit. */
class MemoryConformanceTest extends ConformanceKit {
  private static final MemoryLockServer SERVER = new MemoryLockServer();

  private static final BackendFixture MEMORY =
      new BackendFixture() {
        @Override
        public String name() {
          return "memory";
        }

        @Override
        public BackendFactory backend() {
          return SERVER.backend();
        }

        @Override
        public Set<io.latchkey.Feature> features() {
          // Qualified: the kit's nested suite class Feature hides the import in subclasses.
          return EnumSet.complementOf(
              EnumSet.of(
                  io.latchkey.Feature.CONNECTION_BOUND_HOLDS, io.latchkey.Feature.WAKEUP_WATCH));
        }
      };

  @Override
  protected BackendFixture fixture() {
    return MEMORY;
  }
}
