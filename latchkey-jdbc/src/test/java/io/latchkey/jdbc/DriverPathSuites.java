package io.latchkey.jdbc;

import io.latchkey.testkit.BackendFixture;
import io.latchkey.testkit.contract.FeatureContract;
import io.latchkey.testkit.contract.LeaseContract;
import io.latchkey.testkit.contract.LockStoreContract;
import io.latchkey.testkit.contract.WaitingContract;
import org.junit.jupiter.api.Nested;

/**
 * A few suites of the conformance kit, for one more driver of a mode that the whole kit already
 * runs on another driver: the SPI's lock operations (so that a wrong answer shows as such), lease
 * loss and its listeners, and waiting with timeouts, interrupts and the async forms, which between
 * them go through every statement and driver call of the mode. About 8 s per mode, where the whole
 * kit takes 45 to 90 s; the whole kit runs with {@code -Psoak}.
 */
abstract class DriverPathSuites {
  /**
   * @return the backend under test, the same for every suite
   */
  protected abstract BackendFixture fixture();

  /** The SPI's acquire, renew and release of locks, without an engine. */
  @Nested
  class SpiLockStore extends LockStoreContract {
    @Override
    protected BackendFixture fixture() {
      return DriverPathSuites.this.fixture();
    }
  }

  /** Lease loss and its listeners. */
  @Nested
  class Lease extends LeaseContract {
    @Override
    protected BackendFixture fixture() {
      return DriverPathSuites.this.fixture();
    }
  }

  /** Timeouts, interrupts, wake-ups and the async forms. */
  @Nested
  class Waiting extends WaitingContract {
    @Override
    protected BackendFixture fixture() {
      return DriverPathSuites.this.fixture();
    }
  }

  /** The declared features match what the backend does. */
  @Nested
  class FeatureDeclarations extends FeatureContract {
    @Override
    protected BackendFixture fixture() {
      return DriverPathSuites.this.fixture();
    }
  }
}
