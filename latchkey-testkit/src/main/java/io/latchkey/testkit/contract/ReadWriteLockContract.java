package io.latchkey.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.Feature;
import io.latchkey.Lease;
import io.latchkey.LockUpgradeException;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import io.latchkey.testkit.RequiresMissingFeature;
import java.util.concurrent.ExecutorService;
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
 *       fails with LockUpgradeException instead of waiting, and the read hold stays.
 *   <li>{@code eachSideUnlocksOnlyItsOwnHolds}: unlocking the side the owner does not hold fails
 *       with IllegalMonitorStateException and leaves the other side held.
 *   <li>{@code writeSideIsTheLockOfThatName}: the write lock and {@code lock(name)} are one lock.
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
    assertThatThrownBy(() -> mine.writeLock().tryLock()).isInstanceOf(LockUpgradeException.class);

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
  @RequiresMissingFeature(Feature.READ_WRITE_LOCK)
  void refusedWithoutTheFeature() {
    assertThatThrownBy(() -> client().readWriteLock(uniqueName("rw")))
        .isInstanceOfSatisfying(
            UnsupportedFeatureException.class,
            e -> assertThat(e.feature()).isEqualTo(Feature.READ_WRITE_LOCK));
  }
}
