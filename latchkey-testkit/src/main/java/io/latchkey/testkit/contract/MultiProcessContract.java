package io.latchkey.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.Feature;
import io.latchkey.HolderInfo;
import io.latchkey.LeaderElection;
import io.latchkey.LeaderTerm;
import io.latchkey.Lease;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import io.latchkey.testkit.RequiresOtherProcesses;
import io.latchkey.testkit.process.LockWorker;
import io.latchkey.testkit.process.WorkerJvm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Conformance: worker JVMs contending, and a SIGKILLed holder whose lock frees after its lease.
 * Each worker is a {@link LockWorker} in its own JVM, connected to the fixture's {@link
 * io.latchkey.testkit.BackendFixture#uri()}; workers are killed at the end of every test.
 *
 * <ul>
 *   <li>{@link #incrementsOfSeveralJvmsAreExact}: 3 JVMs × 4 threads × {@link #iterations()}
 *       (system property {@value #ITERATIONS_PROPERTY}, default 50) read-modify-writes of a number
 *       in a shared file, each under the lock, add up exactly; the lock is free afterwards.
 *   <li>{@link #killedWatchdogHolderFreesTheLockAfterItsLease}: a worker's watchdog keeps its lock
 *       beyond two leases; once the worker is SIGKILLed, another client acquires the lock within
 *       the lease plus one renew interval plus a margin, with a higher fencing token.
 *   <li>{@link #killedHolderWithExplicitLeaseStaysHeld}: a worker SIGKILLed while holding the lock
 *       with a long explicit lease leaves it held (the backend keeps the lease, not the process);
 *       with {@link Feature#ADMIN} the monitor shows the dead holder; force release frees it.
 *   <li>{@link #leaderProcessThatLeavesHandsOverAtOnce}: of two worker JVMs in one election, the
 *       leader leaves and the other is elected with a higher fencing token, without waiting for a
 *       lease.
 *   <li>{@link #killedLeaderProcessIsReplacedAfterItsLease}: a leader worker SIGKILLed is replaced
 *       by a participant of this JVM once its lease has run out, with a higher fencing token.
 * </ul>
 */
@RequiresOtherProcesses
public abstract class MultiProcessContract extends ContractSupport {
  /** The system property that overrides the increments per worker thread. */
  public static final String ITERATIONS_PROPERTY = "latchkey.multiprocess.iterations";

  private static final Duration WORKER_START = Duration.ofSeconds(60);
  private static final Duration WORKER_RUN = Duration.ofMinutes(3);
  private static final Duration WORKER_LEASE = Duration.ofSeconds(1);
  private static final Duration WORKER_RENEW = Duration.ofMillis(250);
  private static final Duration EXPIRY_MARGIN = Duration.ofSeconds(2);
  private static final Duration LONG_LEASE = Duration.ofSeconds(30);

  private final List<WorkerJvm> workers = new ArrayList<>();

  /**
   * @return the increments per worker thread
   */
  protected static int iterations() {
    return Integer.getInteger(ITERATIONS_PROPERTY, 50);
  }

  /** Kills every worker the test started, before the clients are closed. */
  @AfterEach
  void killWorkers() {
    workers.forEach(WorkerJvm::close);
    workers.clear();
  }

  @Test
  public void incrementsOfSeveralJvmsAreExact(@TempDir Path dir)
      throws IOException, InterruptedException {
    String name = uniqueName("process-increment");
    Path counter = dir.resolve("counter");
    Files.writeString(counter, "0");
    int jvms = 3;
    int threads = 4;
    int iterations = iterations();

    List<WorkerJvm> incrementing = new ArrayList<>();
    for (int i = 0; i < jvms; i++) {
      incrementing.add(
          startWorker(
              "mode=increment",
              "lock=" + name,
              "counter=" + counter,
              "threads=" + threads,
              "iterations=" + iterations,
              "watchdogLeaseMs=5000",
              "renewMs=1000"));
    }
    for (WorkerJvm worker : incrementing) {
      worker.awaitLine("READY", WORKER_START);
    }
    incrementing.forEach(worker -> worker.send("GO"));
    long reported = 0;
    for (WorkerJvm worker : incrementing) {
      reported += Long.parseLong(worker.awaitLine("DONE", WORKER_RUN));
      assertThat(worker.awaitExit(Duration.ofSeconds(30)))
          .as("exit code of worker %d%s", worker.pid(), worker.diagnostics())
          .isZero();
    }

    long expected = (long) jvms * threads * iterations;
    assertThat(reported).as("increments the workers reported").isEqualTo(expected);
    assertThat(Long.parseLong(Files.readString(counter).trim()))
        .as("the counter after %d JVMs × %d threads × %d increments", jvms, threads, iterations)
        .isEqualTo(expected);
    assertThat(isFree(client().lock(name))).as("lock after every worker exited").isTrue();
  }

  @Test
  public void killedWatchdogHolderFreesTheLockAfterItsLease()
      throws IOException, InterruptedException {
    String name = uniqueName("process-kill-watchdog");
    WorkerJvm holder = startWorker("mode=hold", "lock=" + name);
    holder.awaitLine("READY", WORKER_START);
    long token = Long.parseLong(holder.awaitLine("ACQUIRED", WORKER_START).split(" ", -1)[0]);
    DistributedLock lock = client().lock(name);

    explained(
        holder,
        () ->
            await("the worker's watchdog keeps its lock beyond two leases")
                .pollInterval(Duration.ofMillis(50))
                .during(WORKER_LEASE.multipliedBy(2))
                .atMost(WORKER_LEASE.multipliedBy(6))
                .until(() -> !isFree(lock)));
    holder.kill();

    Duration bound = WORKER_LEASE.plus(WORKER_RENEW).plus(EXPIRY_MARGIN);
    Lease taken =
        await("the killed worker's lock frees within lease + renew interval + margin")
            .pollInterval(Duration.ofMillis(20))
            .atMost(bound)
            .until(lock::tryAcquire, Optional::isPresent)
            .orElseThrow();
    assertThat(taken.fencingToken()).isGreaterThan(token);
    taken.release();
  }

  @Test
  @RequiresFeature(Feature.LEASE_TIME)
  public void killedHolderWithExplicitLeaseStaysHeld() throws IOException, InterruptedException {
    String name = uniqueName("process-kill-explicit");
    WorkerJvm holder = startWorker("mode=hold", "lock=" + name, "leaseMs=" + LONG_LEASE.toMillis());
    holder.awaitLine("READY", WORKER_START);
    String[] acquired = holder.awaitLine("ACQUIRED", WORKER_START).split(" ", -1);
    long token = Long.parseLong(acquired[0]);
    String workerClientId = acquired[1];
    String workerOwner = acquired[2];
    DistributedLock lock = client().lock(name);
    holder.kill();

    await("the killed worker's explicit lease keeps its lock beyond two watchdog leases")
        .pollInterval(Duration.ofMillis(50))
        .during(WORKER_LEASE.multipliedBy(2))
        .atMost(WORKER_LEASE.multipliedBy(6))
        .until(() -> !isFree(lock));

    if (fixture().features().contains(Feature.ADMIN)) {
      LockInfo info = client().admin().inspect(name).orElseThrow();
      assertThat(info.holders())
          .singleElement()
          .satisfies(
              dead -> {
                assertThat(dead.owner()).isEqualTo(workerOwner);
                assertThat(dead.clientId()).isEqualTo(workerClientId);
                assertThat(dead.mode()).isEqualTo(LockMode.EXCLUSIVE);
                assertThat(dead.holds()).isEqualTo(1);
                assertThat(dead.fencingToken()).isEqualTo(token);
                assertThat(dead.remainingLease()).isGreaterThan(WORKER_LEASE);
                assertThat(dead.remainingLease()).isLessThanOrEqualTo(LONG_LEASE);
              });
      assertThat(client().admin().list())
          .filteredOn(listed -> listed.name().equals(name))
          .singleElement()
          .extracting(LockInfo::holders)
          .satisfies(
              holders ->
                  assertThat(holders).extracting(HolderInfo::owner).containsExactly(workerOwner));
    }
    assertThat(client().admin().forceRelease(name)).isTrue();
    assertThat(isFree(lock)).as("lock after force release").isTrue();
  }

  @Test
  public void leaderProcessThatLeavesHandsOverAtOnce() throws IOException, InterruptedException {
    String name = uniqueName("process-election");
    WorkerJvm first = startWorker("mode=elect", "lock=" + name);
    long firstToken = Long.parseLong(first.awaitLine("ELECTED", WORKER_START));
    WorkerJvm second = startWorker("mode=elect", "lock=" + name);
    second.awaitLine("JOINED", WORKER_START);

    first.send("LEAVE");

    assertThat(first.awaitLine("ENDED", WORKER_START)).isEqualTo(firstToken + " left");
    first.awaitLine("LEFT", WORKER_START);
    long secondToken = Long.parseLong(second.awaitLine("ELECTED", WORKER_START));
    assertThat(secondToken).isGreaterThan(firstToken);
  }

  @Test
  public void killedLeaderProcessIsReplacedAfterItsLease()
      throws IOException, InterruptedException {
    String name = uniqueName("process-election-killed");
    WorkerJvm leader = startWorker("mode=elect", "lock=" + name);
    long leaderToken = Long.parseLong(leader.awaitLine("ELECTED", WORKER_START));
    try (LeaderElection here = client().joinElection(name)) {
      assertThat(here.isLeader()).isFalse();

      leader.kill();

      LeaderTerm term =
          here.awaitLeadership(WORKER_LEASE.plus(WORKER_RENEW).plus(EXPIRY_MARGIN).multipliedBy(3))
              .orElseThrow(() -> new AssertionError("nobody replaced the killed leader"));
      assertThat(term.fencingToken()).isGreaterThan(leaderToken);
    }
  }

  private WorkerJvm startWorker(String... args) throws IOException {
    String uri =
        fixture()
            .uri()
            .orElseThrow(() -> new IllegalStateException(fixture().name() + " has no URI"));
    List<String> all = new ArrayList<>();
    all.add("uri=" + uri);
    all.add("watchdogLeaseMs=" + WORKER_LEASE.toMillis());
    all.add("renewMs=" + WORKER_RENEW.toMillis());
    all.addAll(List.of(args));
    WorkerJvm worker = WorkerJvm.start(all);
    workers.add(worker);
    return worker;
  }

  /** Runs an Awaitility check; if it times out, the failure carries the worker's output. */
  private static void explained(WorkerJvm worker, Runnable check) {
    try {
      check.run();
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(e.getMessage() + worker.diagnostics(), e);
    }
  }

  /** Whether this client could take the lock now; if it could, it gives it back at once. */
  private static boolean isFree(DistributedLock lock) {
    Optional<Lease> taken = lock.tryAcquire();
    taken.ifPresent(Lease::release);
    return taken.isPresent();
  }
}
