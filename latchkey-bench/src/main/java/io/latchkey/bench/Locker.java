package io.latchkey.bench;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.jspecify.annotations.Nullable;
import org.redisson.api.RLock;

/**
 * How one benchmark thread takes a lock and gives it back, apart, so that a harness can time the
 * wait and run a critical section between the two. A locker belongs to one thread at a time.
 */
interface Locker {
  /** How long a waiting acquire may take at most: never reached in a sound run. */
  Duration WAIT = Duration.ofMinutes(1);

  /** The explicit lease of the lease styles: never runs out in a run. */
  Duration LEASE = Duration.ofSeconds(30);

  /** Takes the lock, waiting as long as it takes (within {@link #WAIT}), or throws. */
  void acquire() throws Exception;

  /** Gives back the lock taken by the last {@link #acquire()}. */
  void release() throws Exception;

  /** One acquire+release pair, for {@link PairedLatency}. */
  default LockClients.Cycle cycle() {
    return () -> {
      acquire();
      release();
    };
  }

  /**
   * {@code lock()} then {@code unlock()} of any {@link Lock}: latchkey's {@link DistributedLock},
   * Redisson's {@link RLock} (and its multi-locks), Spring Integration's registry locks.
   */
  static Locker lockUnlock(Lock lock) {
    return new Locker() {
      @Override
      public void acquire() {
        lock.lock();
      }

      @Override
      public void release() {
        lock.unlock();
      }
    };
  }

  /** latchkey's {@code acquire(WAIT, LEASE)} then {@code Lease.release()}: no watchdog. */
  static Locker acquireRelease(DistributedLock lock) {
    return new Locker() {
      private @Nullable Lease lease;

      @Override
      public void acquire() throws InterruptedException {
        lease = lock.acquire(WAIT, LEASE);
      }

      @Override
      public void release() {
        Lease held = lease;
        if (held != null) {
          lease = null;
          held.release();
        }
      }
    };
  }

  /** Redisson's {@code tryLock(WAIT, LEASE)} then {@code unlock()}: no watchdog. */
  static Locker tryLockLease(RLock lock) {
    return new Locker() {
      @Override
      public void acquire() throws InterruptedException {
        if (!lock.tryLock(WAIT.toMillis(), LEASE.toMillis(), TimeUnit.MILLISECONDS)) {
          throw new IllegalStateException(
              "Redisson did not grant " + lock.getName() + " in " + WAIT);
        }
      }

      @Override
      public void release() {
        lock.unlock();
      }
    };
  }
}
