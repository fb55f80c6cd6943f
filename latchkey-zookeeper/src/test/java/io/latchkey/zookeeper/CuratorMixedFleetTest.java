package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.HolderInfo;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A mixed fleet: latchkey clients with a Curator layout and Curator's own recipes on the same
 * paths, in one JVM, on one in-process server. Each direction is tested: Curator holds and latchkey
 * waits (and is woken by the watch on Curator's node, well before its re-check interval), latchkey
 * holds and Curator waits; for {@code InterProcessMutex} and both sides of {@code
 * InterProcessReadWriteLock}.
 */
class CuratorMixedFleetTest {
  private static final String NAMESPACE = "mixed";
  private static final Duration WAIT = Duration.ofSeconds(20);

  private TestingServer server;
  private CuratorFramework curator;
  private final List<Latchkey> clients = new ArrayList<>();

  /** Curator's recipes block the calling thread and are owned by it: one thread per recipe. */
  private final List<ExecutorService> curatorThreads = new ArrayList<>();

  @BeforeEach
  void start() throws InterruptedException {
    server = ZooKeeperTestServers.start();
    curator =
        CuratorFrameworkFactory.builder()
            .connectString(server.getConnectString())
            .sessionTimeoutMs(3_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .build();
    curator.start();
    assertThat(curator.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
  }

  @AfterEach
  void stop() throws Exception {
    curatorThreads.forEach(ExecutorService::shutdownNow);
    clients.forEach(Latchkey::close);
    curator.close();
    server.close();
  }

  @Test
  void curatorMutexHoldsAndALatchkeyLockWaitsUntilItIsReleased() throws Exception {
    Latchkey latchkey = connect(LockLayout.CURATOR_MUTEX);
    InterProcessMutex mutex = new InterProcessMutex(curator, "/mixed/orders/1");
    ExecutorService curatorThread = curatorThread();
    assertThat(on(curatorThread, () -> mutex.acquire(5, TimeUnit.SECONDS))).isTrue();

    DistributedLock lock = latchkey.lock("orders/1");
    assertThat(lock.tryLock()).isFalse();
    CompletableFuture<Lease> waiting = lock.acquireAsync(WAIT).toCompletableFuture();
    await().atMost(WAIT).until(() -> children("/mixed/orders/1").size() == 2);
    LockInfo info = latchkey.admin().inspect("orders/1").orElseThrow();
    assertThat(info.holders()).singleElement().satisfies(this::isForeignExclusive);
    assertThat(info.queuedWaiters()).isEqualTo(1);
    assertThat(waiting).isNotDone();

    on(curatorThread, () -> releasing(mutex));
    // Woken by the watch on Curator's node: the re-check interval is far longer than the wait.
    try (Lease lease = waiting.get(WAIT.toSeconds(), TimeUnit.SECONDS)) {
      assertThat(lease.fencingToken()).isPositive();
      HolderInfo holder = latchkey.admin().inspect("orders/1").orElseThrow().holders().get(0);
      assertThat(holder.fencingToken()).isEqualTo(lease.fencingToken());
      assertThat(holder.owner()).doesNotStartWith("foreign:");
    }
  }

  @Test
  void aLatchkeyLockHoldsAndCuratorsMutexWaitsUntilItIsReleased() throws Exception {
    Latchkey latchkey = connect(LockLayout.CURATOR_MUTEX);
    InterProcessMutex mutex = new InterProcessMutex(curator, "/mixed/orders/2");
    ExecutorService curatorThread = curatorThread();
    Lease held = latchkey.lock("orders/2").acquire(WAIT);

    curatorWaitsUntilReleased(held, mutex, curatorThread, "/mixed/orders/2", 2);
    // And back: latchkey queues behind Curator again.
    assertThat(latchkey.lock("orders/2").tryLock()).isFalse();
    on(curatorThread, () -> releasing(mutex));
    assertThat(latchkey.lock("orders/2").tryLock(WAIT)).isTrue();
    latchkey.lock("orders/2").unlock();
  }

  @Test
  void curatorReadersShareWithLatchkeyReadersAndHoldOffLatchkeysWriter() throws Exception {
    Latchkey latchkey = connect(LockLayout.CURATOR_READ_WRITE_LOCK);
    InterProcessReadWriteLock curatorLock = new InterProcessReadWriteLock(curator, "/mixed/doc/1");
    ExecutorService curatorThread = curatorThread();
    assertThat(on(curatorThread, () -> curatorLock.readLock().acquire(5, TimeUnit.SECONDS)))
        .isTrue();

    DistributedReadWriteLock lock = latchkey.readWriteLock("doc/1");
    Lease reading = lock.readLock().acquire(WAIT);
    Latchkey writer = connect(LockLayout.CURATOR_READ_WRITE_LOCK);
    DistributedLock writeLock = writer.readWriteLock("doc/1").writeLock();
    assertThat(writeLock.tryLock()).isFalse();
    CompletableFuture<Lease> writing = writeLock.acquireAsync(WAIT).toCompletableFuture();
    await().atMost(WAIT).until(() -> children("/mixed/doc/1").size() == 3);
    assertThat(latchkey.admin().inspect("doc/1").orElseThrow().holders())
        .extracting(HolderInfo::mode)
        .containsOnly(LockMode.SHARED)
        .hasSize(2);

    reading.release();
    assertThat(writing).isNotDone();
    on(curatorThread, () -> releasing(curatorLock.readLock()));
    try (Lease written = writing.get(WAIT.toSeconds(), TimeUnit.SECONDS)) {
      assertThat(written.fencingToken()).isGreaterThan(reading.fencingToken());
    }
  }

  @Test
  void aLatchkeyWriterHoldsOffCuratorsReadersAndWritersAndAReaderOnlyItsWriters() throws Exception {
    Latchkey latchkey = connect(LockLayout.CURATOR_READ_WRITE_LOCK);
    InterProcessReadWriteLock curatorLock = new InterProcessReadWriteLock(curator, "/mixed/doc/2");
    ExecutorService readerThread = curatorThread();
    ExecutorService writerThread = curatorThread();
    DistributedReadWriteLock lock = latchkey.readWriteLock("doc/2");

    Lease writing = lock.writeLock().acquire(WAIT);
    assertThat(on(writerThread, () -> curatorLock.writeLock().acquire(300, TimeUnit.MILLISECONDS)))
        .isFalse();
    curatorWaitsUntilReleased(writing, curatorLock.readLock(), readerThread, "/mixed/doc/2", 2);
    on(readerThread, () -> releasing(curatorLock.readLock()));

    Lease reading = lock.readLock().acquire(WAIT);
    assertThat(on(readerThread, () -> curatorLock.readLock().acquire(5, TimeUnit.SECONDS)))
        .isTrue();
    on(readerThread, () -> releasing(curatorLock.readLock()));
    curatorWaitsUntilReleased(reading, curatorLock.writeLock(), writerThread, "/mixed/doc/2", 2);
    on(writerThread, () -> releasing(curatorLock.writeLock()));
  }

  @Test
  void curatorsSemaphoreMutexAndALatchkeyLockExcludeEachOtherBothWays() throws Exception {
    Latchkey latchkey = connect(LockLayout.CURATOR_SEMAPHORE_MUTEX);
    InterProcessSemaphoreMutex semaphore = new InterProcessSemaphoreMutex(curator, "/mixed/jobs/1");
    ExecutorService curatorThread = curatorThread();
    DistributedLock lock = latchkey.lock("jobs/1");

    // Curator holds (its lease), latchkey waits and is woken when the lease goes.
    assertThat(on(curatorThread, () -> semaphore.acquire(5, TimeUnit.SECONDS))).isTrue();
    assertThat(lock.tryLock()).isFalse();
    CompletableFuture<Lease> waiting = lock.acquireAsync(WAIT).toCompletableFuture();
    await().atMost(WAIT).until(() -> children("/mixed/jobs/1/locks").size() == 1);
    assertThat(waiting).isNotDone();
    on(curatorThread, () -> releasing(semaphore));
    Lease held = waiting.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(held.fencingToken()).isPositive();

    // latchkey holds, Curator waits until it is released.
    curatorWaitsUntilReleased(held, semaphore, curatorThread, "/mixed/jobs/1/locks", 2);
    assertThat(lock.tryLock()).isFalse();
    on(curatorThread, () -> releasing(semaphore));
    assertThat(lock.tryLock(WAIT)).isTrue();
    lock.unlock();
  }

  @Test
  void aCuratorLayoutTakesPathsAndRefusesEmptySegments() {
    Latchkey latchkey =
        Latchkey.connect(
            ZooKeeperTestServers.uri(server.getConnectString(), NAMESPACE)
                + "&layout=curator-mutex",
            options());
    clients.add(latchkey);
    assertThat(latchkey.backendDescription()).endsWith("?layout=curator-mutex");
    assertThatThrownBy(() -> latchkey.lock("orders//3").tryLock())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no empty segment");
    assertThatThrownBy(
            () ->
                ZooKeeperSettings.parse(
                    URI.create("zookeeper://localhost/" + NAMESPACE + "?layout=redlock")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("latchkey, curator-mutex, curator-rwlock, curator-semaphore-mutex");
  }

  private void isForeignExclusive(HolderInfo holder) {
    assertThat(holder.owner()).startsWith("foreign:");
    assertThat(holder.mode()).isEqualTo(LockMode.EXCLUSIVE);
  }

  private Latchkey connect(LockLayout layout) {
    Latchkey client =
        Latchkey.using(
            ZooKeeperBackend.builder(curator).namespace(NAMESPACE).layout(layout).build(),
            options());
    clients.add(client);
    return client;
  }

  /** A long re-check interval: a waiter that is granted in time was woken by its watch. */
  private static LatchkeyOptions options() {
    return LatchkeyOptions.builder()
        .recheckInterval(Duration.ofMinutes(5))
        .queueKeepAlive(Duration.ofMinutes(5))
        .operationTimeout(Duration.ofSeconds(5))
        .closeOnShutdown(false)
        .build();
  }

  /**
   * latchkey holds: Curator's lock is refused, then waits (its node queued behind latchkey's), and
   * is granted once latchkey releases.
   */
  private void curatorWaitsUntilReleased(
      Lease held, InterProcessLock curatorLock, ExecutorService thread, String queue, int queued)
      throws Exception {
    assertThat(on(thread, () -> curatorLock.acquire(300, TimeUnit.MILLISECONDS))).isFalse();
    Future<Boolean> curatorWaits =
        thread.submit(() -> curatorLock.acquire(WAIT.toSeconds(), TimeUnit.SECONDS));
    await().atMost(WAIT).until(() -> children(queue).size() == queued);
    assertThat(curatorWaits).isNotDone();
    held.release();
    assertThat(curatorWaits.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
  }

  private ExecutorService curatorThread() {
    ExecutorService thread = Executors.newSingleThreadExecutor();
    curatorThreads.add(thread);
    return thread;
  }

  private static <T> T on(ExecutorService thread, Callable<T> call) throws Exception {
    return thread.submit(call).get(30, TimeUnit.SECONDS);
  }

  private static Boolean releasing(InterProcessLock lock) throws Exception {
    lock.release();
    return true;
  }

  private List<String> children(String path) throws Exception {
    return curator.checkExists().forPath(path) == null
        ? List.of()
        : curator.getChildren().forPath(path);
  }
}
