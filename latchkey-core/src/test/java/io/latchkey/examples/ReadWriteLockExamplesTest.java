package io.latchkey.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.HolderInfo;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LockMode;
import io.latchkey.LockUpgradeException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The examples of docs/primitives/read-write-lock.md. */
class ReadWriteLockExamplesTest {
  private static final String URI = "memory:docs-read-write-lock";

  private final Latchkey latchkey = Latchkey.connect(URI);
  private final Latchkey other = Latchkey.connect(URI);
  private final Latchkey third = Latchkey.connect(URI);

  @AfterEach
  void close() {
    latchkey.close();
    other.close();
    third.close();
  }

  @Test
  void usage() throws Exception {
    Journal priceList = new Journal();
    // tag::usage[]
    DistributedReadWriteLock prices = latchkey.readWriteLock("prices/eu");

    DistributedLock read = prices.readLock();
    read.lock();
    try {
      // ... read the price list; other readers may read at the same time ...
    } finally {
      read.unlock();
    }

    try (Lease lease = prices.writeLock().acquire(Duration.ofSeconds(5))) {
      priceList.write("new prices", lease.fencingToken()); // nobody reads or writes meanwhile
    }
    // end::usage[]
    assertThat(priceList.entries()).containsExactly("new prices");
    assertThat(prices.writeLock().isLocked()).isFalse();
  }

  @Test
  void readersShareWritersExclude() throws Exception {
    // tag::share[]
    Lease readerA = latchkey.readWriteLock("prices/us").readLock().acquire(Duration.ZERO);
    Lease readerB = other.readWriteLock("prices/us").readLock().acquire(Duration.ZERO);
    assertThat(latchkey.admin().inspect("prices/us").orElseThrow().holders())
        .extracting(HolderInfo::mode)
        .containsExactly(LockMode.SHARED, LockMode.SHARED);

    DistributedLock write = third.readWriteLock("prices/us").writeLock();
    assertThat(write.tryLock()).isFalse(); // readers hold it
    readerA.release();
    readerB.release();
    assertThat(write.tryLock()).isTrue(); // the last reader left
    // end::share[]
    write.unlock();
  }

  @Test
  void downgrade() throws Exception {
    // tag::downgrade[]
    DistributedReadWriteLock prices = latchkey.readWriteLock("prices/uk");
    prices.writeLock().lock();
    prices.readLock().lock(); // the writer may also read
    prices.writeLock().unlock(); // now only a reader: a downgrade

    assertThat(other.readWriteLock("prices/uk").readLock().tryLock()).isTrue(); // readers join
    assertThat(third.readWriteLock("prices/uk").writeLock().tryLock()).isFalse(); // writers wait
    // end::downgrade[]
    other.readWriteLock("prices/uk").readLock().unlock();
    prices.readLock().unlock();
  }

  @Test
  void upgradeIsRefused() throws Exception {
    // tag::upgrade[]
    DistributedReadWriteLock prices = latchkey.readWriteLock("prices/ch");
    prices.readLock().lock();
    assertThatThrownBy(() -> prices.writeLock().acquire(Duration.ofSeconds(5)))
        .isInstanceOf(LockUpgradeException.class); // at once, not after 5 s
    assertThat(prices.writeLock().tryLock()).isFalse(); // as Lock.tryLock(): not free
    prices.readLock().unlock(); // release the read lock first ...
    prices.writeLock().lock(); // ... then ask for the write lock
    // end::upgrade[]
    prices.writeLock().unlock();
  }

  @Test
  void writeSideIsThePlainLock() throws Exception {
    // tag::write-is-lock[]
    Lease lease = latchkey.readWriteLock("prices/jp").writeLock().acquire(Duration.ZERO);
    assertThat(other.lock("prices/jp").tryLock()).isFalse(); // the same lock
    lease.release();
    // end::write-is-lock[]
  }

  @Test
  void aWaitingWriterHoldsBackNewReaders() throws Exception {
    // tag::writer-preference[]
    DistributedLock read = latchkey.readWriteLock("prices/au").readLock();
    Lease reader = read.acquire(Duration.ZERO);
    CompletableFuture<Lease> writer =
        other
            .readWriteLock("prices/au")
            .writeLock()
            .acquireAsync(Duration.ofSeconds(10))
            .toCompletableFuture();
    await().until(() -> latchkey.admin().inspect("prices/au").orElseThrow().queuedWaiters() == 1);

    DistributedLock newReader = third.readWriteLock("prices/au").readLock();
    assertThat(newReader.tryLock()).isFalse(); // a writer waits: new readers wait behind it
    assertThat(read.tryLock()).isTrue(); // a reader that holds the lock may re-enter
    read.unlock();
    reader.release(); // the last reader leaves ...

    Lease written = writer.get(5, TimeUnit.SECONDS); // ... and the writer gets its turn
    written.release();
    assertThat(newReader.tryLock()).isTrue(); // no writer waits: readers enter again
    // end::writer-preference[]
    newReader.unlock();
  }
}
