package io.latchkey.testkit;

import io.latchkey.Feature;
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
        public Set<Feature> features() {
          return EnumSet.allOf(Feature.class);
        }
      };

  @Override
  protected BackendFixture fixture() {
    return MEMORY;
  }
}
