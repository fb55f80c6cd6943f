package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Awaiting.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LockInfo;
import io.latchkey.LockTimeoutException;
import io.latchkey.LockUpgradeException;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import io.latchkey.testkit.RequiresMissingFeature;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Conformance: read-write rules: shared readers, exclusive writer, writer may read, upgrade
 * refused.
 *
 * <ul>
 *   <li>{@code readersShare}: threads of one client and other clients hold the read lock at once.
 *   <li>{@code writerExcludesReadersAndWriters}: while the write lock is held, no other owner (of
 *       this or another client) gets either side.
 *   <li>{@code readersExcludeWriters}: while any reader holds the read lock, no other owner gets
 *       the write lock; once the last reader is gone it does.
 *   <li>{@code writerMayReadAndDowngrade}: the writer takes the read lock too, and releasing the
 *       write lock leaves it a reader: waiting readers get in, writers still wait.
 *   <li>{@code upgradeIsRefusedAtOnce}: asking for the write lock while holding only the read lock
 *       fails with LockUpgradeException instead of waiting ({@code acquire}, {@code lock}), the
 *       {@code tryLock} forms answer false and {@code tryAcquire} empty, and the read hold stays.
 *   <li>{@code eachSideUnlocksOnlyItsOwnHolds}: unlocking the side the owner does not hold fails
 *       with IllegalMonitorStateException and leaves the other side held.
 *   <li>{@code writeSideIsTheLockOfThatName}: the write lock and {@code lock(name)} are one lock.
 *   <li>{@code waitingWriterHoldsBackNewReaders}: writers are preferred. While a reader holds the
 *       lock and a writer waits, a new reader of another client is refused by {@code tryLock} and
 *       its {@code acquire} waits; the writer gets the lock when the first reader leaves, and the
 *       waiting reader only after the writer released it (that order only where the backend
 *       declares {@link Feature#FAIR_LOCK}, one arrival order for all waiters: on a quorum each
 *       member keeps its own queue, and a writer that loses a split vote may follow the reader).
 *       Then readers share again.
 *   <li>{@code writerThatGaveUpNoLongerHoldsBackReaders}: a writer whose wait ran out leaves the
 *       queue at once, and new readers enter (its own keep-alive is far longer than the test).
 *   <li>{@code deadWriterHoldsBackReadersOnlyUntilItsPlaceExpires}: the queue place of a writer
 *       whose client went away without leaving the queue runs out after the queue keep-alive, and
 *       new readers enter again.
 *   <li>{@code holdersReenterWhileAWriterWaits}: a reader that holds the lock re-enters the read
 *       side, and a writer takes the read side, while another writer waits; another owner of the
 *       same client is held back.
 *   <li>{@code refusedWithoutTheFeature}: a backend without {@link Feature#READ_WRITE_LOCK} refuses
 *       read-write locks with UnsupportedFeatureException.
 * </ul>
 */
public abstract class ReadWriteLockContract extends ContractSupport {

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void readersShare() throws Exception {
    String name = uniqueName("rw");
    DistributedReadWriteLock mine = client().readWriteLock(name);
    DistributedReadWriteLock theirs = newClient().readWriteLock(name);
    ExecutorService otherThread = executor(1);

    mine.readLock().lock();
    assertThat(BackgroundCall.run(otherThread, () -> mine.readLock().tryLock())).isTrue();
    assertThat(theirs.readLock().tryLock()).isTrue();

    assertThat(client().admin().inspect(name))
        .hasValueSatisfying(info -> assertThat(info.holders()).hasSize(3));
    assertThat(mine.readLock().isLocked()).isTrue();

    mine.readLock().unlock();
    BackgroundCall.run(
        otherThread,
        () -> {
          mine.readLock().unlock();
          return null;
        });
    theirs.readLock().unlock();
    assertThat(mine.readLock().isLocked()).isFalse();
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void writerExcludesReadersAndWriters() throws Exception {
    String name = uniqueName("rw");
    DistributedReadWriteLock mine = client().readWriteLock(name);
    DistributedReadWriteLock theirs = newClient().readWriteLock(name);
    ExecutorService otherThread = executor(1);

    mine.writeLock().lock();
    assertThat(theirs.readLock().tryLock()).isFalse();
    assertThat(theirs.writeLock().tryLock()).isFalse();
    assertThat(BackgroundCall.run(otherThread, () -> mine.readLock().tryLock())).isFalse();
    assertThat(BackgroundCall.run(otherThread, () -> mine.writeLock().tryLock())).isFalse();
    assertThat(theirs.writeLock().isLocked()).isTrue();

    mine.writeLock().unlock();
    assertThat(theirs.readLock().tryLock()).isTrue();
    theirs.readLock().unlock();
    assertThat(theirs.writeLock().tryLock()).isTrue();
    theirs.writeLock().unlock();
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void readersExcludeWriters() throws Exception {
    String name = uniqueName("rw");
    DistributedReadWriteLock mine = client().readWriteLock(name);
    DistributedReadWriteLock theirs = newClient().readWriteLock(name);

    mine.readLock().lock();
    assertThat(theirs.writeLock().tryLock()).isFalse();
    assertThat(BackgroundCall.run(executor(1), () -> mine.writeLock().tryLock())).isFalse();
    assertThat(theirs.readLock().tryLock()).isTrue();
    mine.readLock().unlock();
    assertThat(client().readWriteLock(name).writeLock().tryLock())
        .as("another owner still reads")
        .isFalse();

    BackgroundCall<Boolean> writer =
        BackgroundCall.start(
            executor(1),
            () -> {
              DistributedLock write = client().readWriteLock(name).writeLock();
              try (Lease lease = write.acquire(Awaiting.PATIENCE)) {
                return lease.isValid();
              }
            });
    writer.awaitParked();
    theirs.readLock().unlock();
    assertThat(writer.get()).isTrue();
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void writerMayReadAndDowngrade() throws Exception {
    String name = uniqueName("rw");
    DistributedReadWriteLock mine = client().readWriteLock(name);
    DistributedReadWriteLock theirs = newClient().readWriteLock(name);

    mine.writeLock().lock();
    assertThat(mine.readLock().tryLock()).isTrue();
    assertThat(mine.readLock().holdCount()).isEqualTo(1);
    assertThat(mine.writeLock().holdCount()).isEqualTo(1);
    assertThat(theirs.readLock().tryLock()).isFalse();
    BackgroundCall<Boolean> reader =
        BackgroundCall.start(
            executor(1),
            () -> {
              try (Lease lease = theirs.readLock().acquire(Awaiting.PATIENCE)) {
                return lease.isValid();
              }
            });
    reader.awaitParked();

    mine.writeLock().unlock();

    assertThat(mine.readLock().isHeldByCurrentOwner()).isTrue();
    assertThat(mine.writeLock().isHeldByCurrentOwner()).isFalse();
    assertThat(reader.get()).as("a waiting reader gets in after the downgrade").isTrue();
    assertThat(theirs.writeLock().tryLock()).as("the downgraded owner still reads").isFalse();
    mine.readLock().unlock();
    assertThat(theirs.writeLock().tryLock()).isTrue();
    theirs.writeLock().unlock();
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void upgradeIsRefusedAtOnce() throws InterruptedException {
    String name = uniqueName("rw");
    DistributedReadWriteLock mine = client().readWriteLock(name);
    mine.readLock().lock();

    // A wait of the kit's whole patience: an implementation that waits would time out instead.
    assertThatThrownBy(() -> mine.writeLock().acquire(Awaiting.PATIENCE))
        .isInstanceOf(LockUpgradeException.class)
        .hasMessageContaining(name);
    assertThatThrownBy(() -> mine.writeLock().lock()).isInstanceOf(LockUpgradeException.class);
    // The try forms answer as Lock.tryLock() must for a lock that is not free.
    assertThat(mine.writeLock().tryLock()).isFalse();
    assertThat(mine.writeLock().tryLock(Duration.ofMillis(200))).isFalse();
    assertThat(mine.writeLock().tryLock(1, TimeUnit.SECONDS)).isFalse();
    assertThat(mine.writeLock().tryAcquire()).isEmpty();

    assertThat(mine.readLock().holdCount()).isEqualTo(1);
    assertThat(mine.writeLock().holdCount()).isZero();
    mine.readLock().unlock();
    assertThat(mine.writeLock().tryLock()).isTrue();
    mine.writeLock().unlock();
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void eachSideUnlocksOnlyItsOwnHolds() {
    String name = uniqueName("rw");
    DistributedReadWriteLock mine = client().readWriteLock(name);
    DistributedReadWriteLock theirs = newClient().readWriteLock(name);

    mine.writeLock().lock();
    assertThatThrownBy(() -> mine.readLock().unlock())
        .isInstanceOf(IllegalMonitorStateException.class);
    assertThat(mine.writeLock().isHeldByCurrentOwner()).isTrue();
    assertThat(theirs.readLock().tryLock()).isFalse();
    mine.writeLock().unlock();

    mine.readLock().lock();
    assertThatThrownBy(() -> mine.writeLock().unlock())
        .isInstanceOf(IllegalMonitorStateException.class);
    assertThat(mine.readLock().isHeldByCurrentOwner()).isTrue();
    assertThat(theirs.writeLock().tryLock()).isFalse();
    mine.readLock().unlock();
    assertThat(theirs.writeLock().tryLock()).isTrue();
    theirs.writeLock().unlock();
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void writeSideIsTheLockOfThatName() {
    String name = uniqueName("rw");
    DistributedLock write = client().readWriteLock(name).writeLock();
    DistributedLock plain = client().lock(name);

    write.lock();
    assertThat(newClient().lock(name).tryLock()).isFalse();
    assertThat(plain.isHeldByCurrentOwner()).isTrue();
    plain.lock();
    assertThat(write.holdCount()).isEqualTo(2);
    write.unlock();
    plain.unlock();
    assertThat(plain.isLocked()).isFalse();

    DistributedLock theirs = newClient().lock(name);
    theirs.lock();
    assertThat(client().readWriteLock(name).readLock().tryLock()).isFalse();
    assertThat(client().readWriteLock(name).writeLock().tryLock()).isFalse();
    theirs.unlock();
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void waitingWriterHoldsBackNewReaders() throws Exception {
    String name = uniqueName("rw");
    Lease firstReader = client().readWriteLock(name).readLock().acquire(Duration.ZERO);
    List<String> entered = Collections.synchronizedList(new ArrayList<>());
    CompletableFuture<Void> writerMayLeave = new CompletableFuture<>();
    DistributedLock write = newClient().readWriteLock(name).writeLock();
    BackgroundCall<Void> writer =
        BackgroundCall.start(
            executor(1),
            () -> {
              try (Lease lease = write.acquire(Awaiting.PATIENCE)) {
                entered.add(lease.isValid() ? "writer" : "writer without a valid lease");
                writerMayLeave.get(Awaiting.PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
              }
              return null;
            });
    eventually().until(() -> queuedWaiters(name) == 1);

    Latchkey readers = newClient();
    assertThat(readers.readWriteLock(name).readLock().tryLock()).as("a writer waits").isFalse();
    DistributedLock read = readers.readWriteLock(name).readLock();
    BackgroundCall<Void> reader =
        BackgroundCall.start(
            executor(1),
            () -> {
              try (Lease lease = read.acquire(Awaiting.PATIENCE)) {
                entered.add(lease.isValid() ? "reader" : "reader without a valid lease");
              }
              return null;
            });
    eventually().until(() -> queuedWaiters(name) == 2);
    assertThat(entered).isEmpty();

    firstReader.release();
    eventually().until(() -> entered.contains("writer"));
    assertThat(readers.readWriteLock(name).readLock().tryLock()).as("a writer holds").isFalse();
    writerMayLeave.complete(null);
    writer.get();
    reader.get();
    if (client().features().contains(Feature.FAIR_LOCK)) {
      assertThat(entered).containsExactly("writer", "reader");
    } else {
      assertThat(entered).containsExactlyInAnyOrder("writer", "reader");
    }

    assertThat(readers.readWriteLock(name).readLock().tryLock()).as("no writer waits").isTrue();
    assertThat(client().readWriteLock(name).readLock().tryLock()).isTrue();
    readers.readWriteLock(name).readLock().unlock();
    client().readWriteLock(name).readLock().unlock();
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void writerThatGaveUpNoLongerHoldsBackReaders() throws Exception {
    String name = uniqueName("rw");
    Lease firstReader = client().readWriteLock(name).readLock().acquire(Duration.ZERO);
    // If giving up did not leave the queue, this writer's place would hold readers back for
    // minutes.
    Latchkey quitterClient = newClient(options -> options.queueKeepAlive(Duration.ofMinutes(5)));
    BackgroundCall<Throwable> quitter =
        waitForWriteLock(quitterClient, name, Duration.ofSeconds(3));
    eventually().until(() -> queuedWaiters(name) == 1 || quitter.isDone());
    DistributedLock read = newClient().readWriteLock(name).readLock();
    // Normally the writer still waits here; on a very slow machine it may already have given up,
    // which makes this test weaker but not wrong.
    boolean readerEntered = read.tryLock();
    if (!quitter.isDone()) {
      assertThat(readerEntered).as("a writer waits").isFalse();
    }

    assertThat(quitter.get()).isInstanceOf(LockTimeoutException.class);
    if (!readerEntered) {
      eventually().until(read::tryLock);
    }
    read.unlock();
    firstReader.release();
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void deadWriterHoldsBackReadersOnlyUntilItsPlaceExpires() throws Exception {
    String name = uniqueName("rw");
    Lease firstReader = client().readWriteLock(name).readLock().acquire(Duration.ZERO);
    Latchkey doomed = newClient();
    waitForWriteLock(doomed, name, Awaiting.PATIENCE);
    eventually().until(() -> queuedWaiters(name) == 1);
    DistributedLock read = newClient().readWriteLock(name).readLock();
    assertThat(read.tryLock()).as("a writer waits").isFalse();

    // The writer's process goes away; nothing renews its place in the queue any more, and the
    // kit's queue keep-alive is short.
    doomed.close();

    eventually().until(read::tryLock);
    read.unlock();
    firstReader.release();
  }

  @Test
  @RequiresFeature(Feature.READ_WRITE_LOCK)
  void holdersReenterWhileAWriterWaits() throws Exception {
    String name = uniqueName("rw");
    DistributedReadWriteLock mine = client().readWriteLock(name);
    mine.readLock().lock();
    BackgroundCall<Boolean> writer = holdWriteLockBriefly(newClient(), name);
    eventually().until(() -> queuedWaiters(name) == 1);

    assertThat(mine.readLock().tryLock()).as("the reader re-enters").isTrue();
    assertThat(mine.readLock().holdCount()).isEqualTo(2);
    assertThat(BackgroundCall.run(executor(1), () -> mine.readLock().tryLock()))
        .as("another thread is another owner, held back by the writer")
        .isFalse();
    mine.readLock().unlock();
    mine.readLock().unlock();
    assertThat(writer.get()).isTrue();

    mine.writeLock().lock();
    BackgroundCall<Boolean> nextWriter = holdWriteLockBriefly(newClient(), name);
    eventually().until(() -> queuedWaiters(name) == 1);
    assertThat(mine.readLock().tryLock()).as("the writer takes the read side").isTrue();
    mine.writeLock().unlock();
    assertThat(mine.readLock().isHeldByCurrentOwner()).isTrue();
    mine.readLock().unlock();
    assertThat(nextWriter.get()).isTrue();
  }

  @Test
  @RequiresMissingFeature(Feature.READ_WRITE_LOCK)
  void refusedWithoutTheFeature() {
    assertThatThrownBy(() -> client().readWriteLock(uniqueName("rw")))
        .isInstanceOfSatisfying(
            UnsupportedFeatureException.class,
            e -> assertThat(e.feature()).isEqualTo(Feature.READ_WRITE_LOCK));
  }

  private int queuedWaiters(String name) {
    return client().admin().inspect(name).map(LockInfo::queuedWaiters).orElse(-1);
  }

  /** A writer that waits for the write lock and releases it at once; ends with what it threw. */
  private BackgroundCall<Throwable> waitForWriteLock(
      Latchkey writerClient, String name, Duration wait) {
    DistributedLock write = writerClient.readWriteLock(name).writeLock();
    return BackgroundCall.start(
        executor(1), () -> catchThrowable(() -> write.acquire(wait).release()));
  }

  private BackgroundCall<Boolean> holdWriteLockBriefly(Latchkey writerClient, String name) {
    DistributedLock write = writerClient.readWriteLock(name).writeLock();
    return BackgroundCall.start(
        executor(1),
        () -> {
          try (Lease lease = write.acquire(Awaiting.PATIENCE)) {
            return lease.isValid();
          }
        });
  }
}
