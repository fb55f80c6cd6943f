package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.latchkey.BackendTimeoutException;
import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The blocking {@code lock()} and {@code unlock()} run their transaction on the calling thread,
 * which waits for it anyway ({@link io.latchkey.spi.CallerWaits}), when the connection source keeps
 * to the operation timeout by itself; the asynchronous forms run theirs on the engine's blocking
 * executor, never on the caller's thread, and so does everything over a data source whose user did
 * not say it keeps to the timeout. A data source that makes a connection for each transaction
 * records which thread asked for it.
 */
class CallerThreadTest {
  @RegisterExtension static final SqlServers SERVERS = new SqlServers();

  @Test
  void blockingLockAndUnlockRunOnTheCallersThread() {
    List<Thread> borrowers = new CopyOnWriteArrayList<>();
    try (Latchkey client = client(borrowers)) {
      DistributedLock lock = warmedUp(client.lock("caller-thread"), borrowers);

      lock.lock();
      lock.unlock();

      // The presence record's heartbeat may take a connection meanwhile, on another thread.
      Thread caller = Thread.currentThread();
      assertThat(borrowers).filteredOn(thread -> thread == caller).hasSize(2);
    }
  }

  @Test
  void aDataSourceNotSaidToKeepTheBoundKeepsBlockingCallsOffTheCallersThread() {
    List<Thread> borrowers = new CopyOnWriteArrayList<>();
    try (Latchkey client = client(borrowers, false, new AtomicBoolean())) {
      DistributedLock lock = warmedUp(client.lock("default-thread"), borrowers);

      lock.lock();
      lock.unlock();

      assertThat(borrowers).hasSizeGreaterThanOrEqualTo(2).doesNotContain(Thread.currentThread());
    }
  }

  /**
   * A data source that waits for a connection far longer than the operation timeout (a pool's own
   * timeout, while the database is down): the blocking {@code lock()} still fails within the
   * operation timeout, since the engine's timer ends the wait; on the caller's thread nothing
   * would.
   */
  @Test
  void aBlockingLockOverADataSourceThatWaitsLongerFailsWithinTheOperationTimeout() {
    List<Thread> borrowers = new CopyOnWriteArrayList<>();
    AtomicBoolean stalled = new AtomicBoolean();
    try (Latchkey client = client(borrowers, false, stalled)) {
      DistributedLock lock = warmedUp(client.lock("stalled"), borrowers);
      stalled.set(true);
      try {
        assertTimeoutPreemptively(
            Duration.ofSeconds(20),
            () -> assertThatThrownBy(lock::lock).isInstanceOf(BackendTimeoutException.class));
      } finally {
        synchronized (stalled) {
          stalled.set(false);
          stalled.notifyAll();
        }
      }
    }
  }

  @Test
  void asynchronousFormsRunOnTheBlockingExecutor() throws Exception {
    List<Thread> borrowers = new CopyOnWriteArrayList<>();
    try (Latchkey client = client(borrowers)) {
      DistributedLock lock = warmedUp(client.lock("executor-thread"), borrowers);

      Lease lease =
          lock.acquireAsync(Duration.ofSeconds(10)).toCompletableFuture().get(10, TimeUnit.SECONDS);
      lease.releaseAsync().toCompletableFuture().get(10, TimeUnit.SECONDS);

      assertThat(borrowers).hasSizeGreaterThanOrEqualTo(2).doesNotContain(Thread.currentThread());
    }
  }

  /** The lock after a first cycle (which creates its resource row), with nothing recorded. */
  private static DistributedLock warmedUp(DistributedLock lock, List<Thread> borrowers) {
    lock.lock();
    lock.unlock();
    borrowers.clear();
    return lock;
  }

  /**
   * A client on tables of their own, whose data source records the thread of each transaction and
   * is said to keep to the operation timeout.
   */
  private static Latchkey client(List<Thread> borrowers) {
    return client(borrowers, true, new AtomicBoolean());
  }

  /**
   * @param bounded whether the backend is told that the data source keeps to the operation timeout
   * @param stalled while set, the data source holds every request for a connection until it is
   *     cleared (and notified)
   */
  private static Latchkey client(List<Thread> borrowers, boolean bounded, AtomicBoolean stalled) {
    String url = SERVERS.postgres().jdbcUrl();
    DataSource recording =
        JdbcFixtures.connectionPerCall(
            url,
            () -> {
              borrowers.add(Thread.currentThread());
              synchronized (stalled) {
                while (stalled.get()) {
                  try {
                    stalled.wait();
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                  }
                }
              }
            });
    String prefix = "c" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_";
    return Latchkey.using(
        JdbcBackend.builder(recording)
            .createSchema(true)
            .tablePrefix(prefix)
            .connectionWaitBounded(bounded)
            .build(),
        LatchkeyOptions.builder()
            .operationTimeout(Duration.ofSeconds(2))
            .closeOnShutdown(false)
            .build());
  }
}
