package io.latchkey.zookeeper;

import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.LeasedSemaphoreStore;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

/**
 * Leased semaphores as lease nodes, in the manner of Curator's {@code InterProcessSemaphoreV2}: the
 * semaphore's node holds the total; each granted permit is an ephemeral child {@code p-{permit id}}
 * whose creation zxid is its fencing token. A permit lives as long as the session of the client
 * that took it (the watchdog's lease is the engine's bound on trusting it); an explicit lease per
 * permit would need TTL nodes and is refused, like every explicit lease on this backend.
 *
 * <p>A grant is one multi-op: a write of the semaphore's node at the version read (which serialises
 * grants against each other and against changes of the total) and the creation of the permit's
 * node, after counting the children against the total. A release deletes the permit's node; a
 * waiter watches the semaphore's children.
 *
 * <p>A grant or release that fails on the connection may leave the permit's node in the session: it
 * is handed to {@link StrandedNodes}, which deletes it once the connection is back. The failed
 * acquisition's permit id is never used again (each acquisition draws fresh ids), and the engine
 * forgot a permit whose release failed, so the delete takes no permit that anyone holds.
 */
final class ZooKeeperLeasedSemaphoreStore implements LeasedSemaphoreStore {
  private static final int ATTEMPTS = 64;

  private final ZooKeeperCalls calls;
  private final ZooKeeperCounters counters;
  private final LongSupplier sessionTimeoutMillis;
  private final StrandedNodes stranded;

  ZooKeeperLeasedSemaphoreStore(
      ZooKeeperCalls calls,
      ZooKeeperCounters counters,
      LongSupplier sessionTimeoutMillis,
      StrandedNodes stranded) {
    this.calls = calls;
    this.counters = counters;
    this.sessionTimeoutMillis = sessionTimeoutMillis;
    this.stranded = stranded;
  }

  @Override
  public CompletableFuture<Boolean> trySetPermits(String name, int permits) {
    return counters.setOnce(ZooKeeperPaths.leasedSemaphore(name), permits);
  }

  @Override
  public CompletableFuture<Void> addPermits(String name, int delta) {
    return counters.addPermits(
        ZooKeeperPaths.leasedSemaphore(name), "leased semaphore '" + name + "'", delta);
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String name, String permitId, long leaseMillis) {
    return stranded.onConnectionLoss(
        attempt(name, permitId, 0), ZooKeeperPaths.permit(name, permitId), -1, code -> {});
  }

  private CompletableFuture<AcquireResult> attempt(String name, String permitId, int round) {
    if (round >= ATTEMPTS) {
      return CompletableFuture.failedFuture(
          new ConcurrentModificationException("leased semaphore '" + name + "' kept changing"));
    }
    String semaphore = ZooKeeperPaths.leasedSemaphore(name);
    String permit = ZooKeeperPaths.permit(name, permitId);
    String permitNode = permit.substring(permit.lastIndexOf('/') + 1);
    return counters
        .read(semaphore)
        .thenCompose(
            total ->
                calls
                    .children(semaphore)
                    .thenCompose(
                        children -> {
                          if (children.contains(permitNode)) {
                            return grantOf(permit, name, permitId, round);
                          }
                          if (!total.exists() || children.size() >= total.value()) {
                            return calls
                                .watchChildren(semaphore)
                                .thenApply(watch -> AcquireResult.busyUntil(watch.fired()));
                          }
                          return take(semaphore, total, permit)
                              .thenCompose(
                                  code ->
                                      code == KeeperException.Code.OK
                                              || code == KeeperException.Code.NODEEXISTS
                                          ? grantOf(permit, name, permitId, round)
                                          : attempt(name, permitId, round + 1));
                        }));
  }

  private CompletableFuture<KeeperException.Code> take(
      String semaphore, ZooKeeperCounters.Counter total, String permit) {
    return calls
        .send(
            (callback, on) -> {
              List<CuratorOp> ops =
                  List.of(
                      calls
                          .client()
                          .transactionOp()
                          .setData()
                          .withVersion(total.version())
                          .forPath(semaphore, ZooKeeperCounters.format(total.value())),
                      calls
                          .client()
                          .transactionOp()
                          .create()
                          .withMode(CreateMode.EPHEMERAL)
                          .forPath(permit, new byte[0]));
              calls.client().transaction().inBackground(callback, on).forOperations(ops);
            })
        .thenApply(
            event -> {
              KeeperException.Code code = ZooKeeperCalls.code(event);
              if (code != KeeperException.Code.OK
                  && code != KeeperException.Code.BADVERSION
                  && code != KeeperException.Code.NODEEXISTS
                  && code != KeeperException.Code.NONODE) {
                throw new java.util.concurrent.CompletionException(ZooKeeperCalls.failure(event));
              }
              return code;
            });
  }

  private CompletableFuture<AcquireResult> grantOf(
      String permit, String name, String permitId, int round) {
    return calls
        .stat(permit)
        .thenCompose(
            stat ->
                stat == null
                    ? attempt(name, permitId, round + 1)
                    : CompletableFuture.completedFuture(
                        AcquireResult.grantedFor(
                            stat.getCzxid(), 1, sessionTimeoutMillis.getAsLong())));
  }

  @Override
  public CompletableFuture<Boolean> release(String name, String permitId) {
    String permit = ZooKeeperPaths.permit(name, permitId);
    return stranded
        .onConnectionLoss(calls.delete(permit, -1), permit, -1, code -> {})
        .thenApply(code -> code == KeeperException.Code.OK);
  }

  @Override
  public CompletableFuture<Integer> availablePermits(String name) {
    String semaphore = ZooKeeperPaths.leasedSemaphore(name);
    return counters
        .read(semaphore)
        .thenCompose(
            total ->
                calls
                    .children(semaphore)
                    .thenApply(children -> (int) (total.value() - children.size())));
  }

  /**
   * @return whether a permit grant is still on record with its token
   */
  CompletableFuture<Boolean> confirm(String name, String permitId, long token) {
    return calls
        .stat(ZooKeeperPaths.permit(name, permitId))
        .thenApply(stat -> stat != null && stat.getCzxid() == token);
  }
}
