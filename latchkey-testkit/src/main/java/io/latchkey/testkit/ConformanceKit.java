package io.latchkey.testkit;

import io.latchkey.testkit.contract.AdminStoreContract;
import io.latchkey.testkit.contract.BadInputContract;
import io.latchkey.testkit.contract.CountDownLatchContract;
import io.latchkey.testkit.contract.CountDownLatchOperationsContract;
import io.latchkey.testkit.contract.FairLockContract;
import io.latchkey.testkit.contract.FeatureContract;
import io.latchkey.testkit.contract.FencingContract;
import io.latchkey.testkit.contract.InspectionContract;
import io.latchkey.testkit.contract.LeaderElectionContract;
import io.latchkey.testkit.contract.LeaseContract;
import io.latchkey.testkit.contract.LeasedSemaphoreContract;
import io.latchkey.testkit.contract.LeasedSemaphoreOperationsContract;
import io.latchkey.testkit.contract.LockStoreContract;
import io.latchkey.testkit.contract.MultiLockContract;
import io.latchkey.testkit.contract.MultiProcessContract;
import io.latchkey.testkit.contract.MutexContract;
import io.latchkey.testkit.contract.MutualExclusionStressContract;
import io.latchkey.testkit.contract.OwnerTokenContract;
import io.latchkey.testkit.contract.PermitStoreContract;
import io.latchkey.testkit.contract.ReadWriteLockContract;
import io.latchkey.testkit.contract.ReentrantLockContract;
import io.latchkey.testkit.contract.RenewContract;
import io.latchkey.testkit.contract.RevocationContract;
import io.latchkey.testkit.contract.SemaphoreContract;
import io.latchkey.testkit.contract.SemaphoreOperationsContract;
import io.latchkey.testkit.contract.SpiRevocationContract;
import io.latchkey.testkit.contract.SynchronizerInspectionContract;
import io.latchkey.testkit.contract.SynchronizerStoreContract;
import io.latchkey.testkit.contract.WaitQueueContract;
import io.latchkey.testkit.contract.WaitingContract;
import org.junit.jupiter.api.Nested;

/**
 * The whole conformance kit. A backend module runs all of it with one test class:
 *
 * <pre>{@code
 * class RedisConformanceTest extends ConformanceKit {
 *   @Override
 *   protected BackendFixture fixture() { return REDIS; }
 * }
 * }</pre>
 *
 * Each suite is a nested class, so reports group the tests by primitive and property. The {@code
 * Spi*} suites sit below the others: they open the backend without an engine and call the SPI
 * directly, so that a backend that answers wrongly fails there with the wrong answer in the
 * message, before an engine turns it into a timeout.
 */
public abstract class ConformanceKit {
  /**
   * @return the backend under test, the same for every suite
   */
  protected abstract BackendFixture fixture();

  /** Mutual exclusion, reentrancy and hold counts, owner-only unlock, the Lock methods. */
  @Nested
  class ReentrantLock extends ReentrantLockContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /**
   * Explicit lease expiry, watchdog renewal, lease loss and its listeners, re-entry never
   * shortening a lease.
   */
  @Nested
  class Lease extends LeaseContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Fencing tokens grow with every grant of a name. */
  @Nested
  class Fencing extends FencingContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** First-come first-served order and dead waiters dropping out of the queue. */
  @Nested
  class FairLock extends FairLockContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** The non-reentrant mutex. */
  @Nested
  class Mutex extends MutexContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Read-write rules: shared readers, exclusive writer, writer may read, upgrade refused. */
  @Nested
  class ReadWriteLock extends ReadWriteLockContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Explicit owner tokens: re-entry and release from other threads and clients. */
  @Nested
  class OwnerToken extends OwnerTokenContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Timeouts, interrupts, wake-ups and the async forms. */
  @Nested
  class Waiting extends WaitingContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Invalid arguments are refused with clear messages. */
  @Nested
  class BadInput extends BadInputContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Inspection, listing and force release. */
  @Nested
  class Inspection extends InspectionContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Cooperative revocation: holders asked to give a lock up, on their callback executor. */
  @Nested
  class Revocation extends RevocationContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Leader election on the locks: one leader, hand-over, loud loss, fencing tokens per term. */
  @Nested
  class LeaderElection extends LeaderElectionContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Counting semaphore accounting. */
  @Nested
  class Semaphore extends SemaphoreContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Leased semaphore accounting and permit expiry. */
  @Nested
  class LeasedSemaphore extends LeasedSemaphoreContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Count-down latches. */
  @Nested
  class CountDownLatch extends CountDownLatchContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Untimed acquire, drain, set, release-if-exists and deletion of semaphores. */
  @Nested
  class SemaphoreOperations extends SemaphoreOperationsContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /**
   * True counts, untimed acquire, batches, lease updates, held permits and deletion of leased
   * semaphores.
   */
  @Nested
  class LeasedSemaphoreOperations extends LeasedSemaphoreOperationsContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Untimed await and deletion of latches. */
  @Nested
  class CountDownLatchOperations extends CountDownLatchOperationsContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** The operator's view of semaphores, leased semaphores and latches. */
  @Nested
  class SynchronizerInspection extends SynchronizerInspectionContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Multi-lock all-or-none and deadlock-free ordering. */
  @Nested
  class MultiLock extends MultiLockContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Many threads doing an unsynchronised read-modify-write under the lock. */
  @Nested
  class MutualExclusionStress extends MutualExclusionStressContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Declared features match the backend, missing ones refuse cleanly. */
  @Nested
  class FeatureDeclarations extends FeatureContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** Worker JVMs contending, and a SIGKILLed holder whose lock frees after its lease. */
  @Nested
  class MultiProcess extends MultiProcessContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /**
   * The SPI itself, below the engine: LockStore grant and release rules, called on the backend
   * directly.
   */
  @Nested
  class SpiLockStore extends LockStoreContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** The SPI: renewal of grants by owner and fencing token, never shortening a lease. */
  @Nested
  class SpiRenew extends RenewContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** The SPI: the wait queue of lock records and the wake-ups of releases. */
  @Nested
  class SpiWaitQueue extends WaitQueueContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** The SPI: semaphore, leased semaphore and latch stores. */
  @Nested
  class SpiPermitStores extends PermitStoreContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /**
   * The SPI: the optional store operations of issue 13 (drain and set, deletes, permit batches,
   * lease updates, synchronizer inspection).
   */
  @Nested
  class SpiSynchronizerStores extends SynchronizerStoreContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** The SPI: the operator's AdminStore and presence records. */
  @Nested
  class SpiAdminStore extends AdminStoreContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }

  /** The SPI: revocation requests sent to the clients of a lock's holders. */
  @Nested
  class SpiRevocation extends SpiRevocationContract {
    @Override
    protected BackendFixture fixture() {
      return ConformanceKit.this.fixture();
    }
  }
}
