package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The blocking {@code lock()} and {@code unlock()} run their transaction on the calling thread,
 * which waits for it anyway ({@link io.latchkey.spi.CallerWaits}); the asynchronous forms run
 * theirs on the engine's blocking executor, never on the caller's thread. A data source that makes
 * a connection for each transaction records which thread asked for it.
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

  /** A client on tables of their own, whose data source records the thread of each transaction. */
  private static Latchkey client(List<Thread> borrowers) {
    String url = SERVERS.postgres().jdbcUrl();
    DataSource recording =
        JdbcFixtures.connectionPerCall(url, () -> borrowers.add(Thread.currentThread()));
    String prefix = "c" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_";
    return Latchkey.using(
        JdbcBackend.builder(recording).createSchema(true).tablePrefix(prefix).build(),
        LatchkeyOptions.builder().closeOnShutdown(false).build());
  }
}
