package io.latchkey.zookeeper;

import io.latchkey.spi.FenceStore;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * The fence store of a ZooKeeper quorum member (docs/adr/0009-quorum-fencing.md), default layout
 * only: a Curator layout's lock directory is shared with Curator's recipes, which would take a
 * fence record for one of their nodes.
 *
 * <p>A lock's counter. ZooKeeper's token is a node's creation zxid, which cannot be set; a quorum
 * raises it by an offset instead, kept in the lock's fence record ({@link LockFence}), a persistent
 * child of the lock's directory. A raise to {@code atLeast} writes nothing if a holder's token or
 * the record's raised value is there already (the next node's token is larger anyway); else it
 * replaces the record, in one multi-op guarded by the directory's data version (so that two raises
 * cannot both replace the same record), with offset {@code max(old offset, atLeast − z)}: z is a
 * zxid the directory had reached when it was read (its last child change or data write), or one
 * below the oldest node waiting in it, if lower. Every node granted later was made after z, so its
 * token is above {@code atLeast}. The offset never goes down, so tokens keep growing. The lock's
 * counter, as read, is the largest of the record's raised value and the holders' tokens. The record
 * keeps the directory (a container otherwise removed once empty), so a raised lock's directory
 * stays: one node per raised lock name, as Redis keeps a counter.
 *
 * <p>The epoch record is the persistent node {@code /epoch}: {@code value} and {@code
 * quarantineMs}. Its quarantine ends {@code quarantineMs} after the node's creation time, by the
 * ensemble's clock: ZooKeeper has no clock to read, but the leader stamps its wall time into every
 * write ({@code ctime} at creation, {@code mtime} at each change). While a record has a quarantine,
 * reading it writes it back unchanged (at its version) and compares that write's {@code mtime} with
 * the record's {@code ctime}, both from the same answer; once the quarantine is over, the write
 * clears it, and from then on reading the epoch is one read. The two times are one clock as long as
 * the leader that created the record is the leader that stamps the write; a fail-over between them
 * compares two servers' wall clocks (ADR 0009).
 */
final class ZooKeeperFenceStore implements FenceStore {
  /** How often a call starts over after a concurrent change. */
  private static final int ATTEMPTS = 32;

  private final ZooKeeperCalls calls;
  private final ZooKeeperAdminStore admin;

  ZooKeeperFenceStore(ZooKeeperCalls calls, ZooKeeperAdminStore admin) {
    this.calls = calls;
    this.admin = admin;
  }

  @Override
  public CompletableFuture<Long> raiseLockFence(String name, long atLeast) {
    if (atLeast < 0) {
      throw new IllegalArgumentException("a fence is raised to a value ≥ 0, not " + atLeast);
    }
    return raise(name, ZooKeeperPaths.lockDir(name), atLeast, 0);
  }

  private CompletableFuture<Long> raise(String name, String dir, long atLeast, int round) {
    if (round >= ATTEMPTS) {
      return CompletableFuture.failedFuture(
          new ConcurrentModificationException(
              "the fence of lock '" + name + "' kept changing during " + ATTEMPTS + " attempts"));
    }
    // The directory's stat first: the zxid it shows is one every node listed after it passed.
    return calls
        .stat(dir)
        .thenCompose(
            dirStat ->
                admin
                    .load(name)
                    .thenCompose(
                        queue -> {
                          long counter = queue.fence().raised();
                          for (LockQueue.Entry holder : queue.holders()) {
                            counter = Math.max(counter, queue.fencingToken(holder));
                          }
                          if (atLeast <= counter) {
                            return CompletableFuture.completedFuture(counter);
                          }
                          if (dirStat == null) {
                            return calls
                                .create(dir, new byte[0], CreateMode.CONTAINER)
                                .thenCompose(made -> raise(name, dir, atLeast, round + 1));
                          }
                          // Below every node that may still be granted: those made later, and
                          // those waiting now.
                          long reached = Math.max(dirStat.getPzxid(), dirStat.getMzxid());
                          for (LockQueue.Entry entry : queue.entries()) {
                            if (!entry.holding()) {
                              reached = Math.min(reached, entry.stat().getCzxid() - 1);
                            }
                          }
                          // Tokens are the base plus a node's token (TokenBase).
                          LockFence next =
                              new LockFence(
                                  Math.max(
                                      queue.fence().offset(), atLeast - queue.base() - reached),
                                  atLeast);
                          return replace(dir, dirStat, queue.fence(), next)
                              .thenCompose(
                                  code ->
                                      code == KeeperException.Code.OK
                                          ? CompletableFuture.completedFuture(atLeast)
                                          : raise(name, dir, atLeast, round + 1));
                        }));
  }

  /**
   * Replaces a lock's fence record in one multi-op, if the directory's data version is still the
   * one read.
   *
   * @return OK, or the code of the change that made it fail (BADVERSION, NONODE, NODEEXISTS)
   */
  private CompletableFuture<KeeperException.Code> replace(
      String dir, Stat dirStat, LockFence old, LockFence next) {
    return calls
        .transaction(
            op -> {
              List<CuratorOp> ops = new ArrayList<>(3);
              ops.add(op.setData().withVersion(dirStat.getVersion()).forPath(dir, new byte[0]));
              if (!old.equals(LockFence.NONE)) {
                ops.add(op.delete().forPath(dir + "/" + old.name()));
              }
              ops.add(op.create().withMode(CreateMode.PERSISTENT).forPath(dir + "/" + next.name()));
              return ops;
            })
        .thenApply(ZooKeeperCalls.Transaction::code);
  }

  @Override
  public CompletableFuture<Epoch> epoch(long atLeast, long quarantineMillis) {
    if (atLeast < 0 || quarantineMillis < 0) {
      throw new IllegalArgumentException(
          "an epoch and a quarantine are ≥ 0, not " + atLeast + " and " + quarantineMillis);
    }
    return epoch(atLeast, quarantineMillis, 0);
  }

  private CompletableFuture<Epoch> epoch(long atLeast, long quarantineMillis, int round) {
    if (round >= ATTEMPTS) {
      return CompletableFuture.failedFuture(
          new ConcurrentModificationException(
              "the epoch record kept changing during " + ATTEMPTS + " attempts"));
    }
    return calls
        .read(ZooKeeperPaths.EPOCH)
        .thenCompose(
            read -> {
              if (read == null) {
                if (atLeast == 0) {
                  return CompletableFuture.completedFuture(new Epoch(0, 0));
                }
                return calls
                    .create(
                        ZooKeeperPaths.EPOCH,
                        format(atLeast, quarantineMillis),
                        CreateMode.PERSISTENT)
                    .thenCompose(
                        created ->
                            created.ok()
                                ? CompletableFuture.completedFuture(
                                    new Epoch(atLeast, quarantineMillis))
                                : epoch(atLeast, quarantineMillis, round + 1));
              }
              Map<String, String> fields = NodeFields.decode(read.data());
              long value = Long.parseLong(fields.getOrDefault("value", "0"));
              long quarantine = Long.parseLong(fields.getOrDefault("quarantineMs", "0"));
              if (atLeast <= value && quarantine == 0) {
                return CompletableFuture.completedFuture(new Epoch(value, 0));
              }
              long raised = Math.max(value, atLeast);
              int version = read.stat().getVersion();
              return rewrite(raised, quarantine, version)
                  .thenCompose(
                      written -> {
                        if (written == null) {
                          return epoch(atLeast, quarantineMillis, round + 1);
                        }
                        long left =
                            Math.max(0, written.getCtime() + quarantine - written.getMtime());
                        if (left > 0 || quarantine == 0) {
                          return CompletableFuture.completedFuture(new Epoch(raised, left));
                        }
                        // Over: cleared, so that the next read costs no write. A concurrent
                        // change wins; it clears the marker itself if it still needs to.
                        return rewrite(raised, 0, written.getVersion())
                            .thenApply(cleared -> new Epoch(raised, 0));
                      });
            });
  }

  /**
   * Writes the epoch record at a version.
   *
   * @return its stat after the write (its {@code mtime} is the leader's clock now), or null if the
   *     record changed or went meanwhile
   */
  private CompletableFuture<@Nullable Stat> rewrite(
      long value, long quarantineMillis, int version) {
    return calls
        .send(
            (callback, on) ->
                calls
                    .client()
                    .setData()
                    .withVersion(version)
                    .inBackground(callback, on)
                    .forPath(ZooKeeperPaths.EPOCH, format(value, quarantineMillis)))
        .thenApply(event -> changeCode(event) == KeeperException.Code.OK ? event.getStat() : null);
  }

  private static KeeperException.Code changeCode(CuratorEvent event) {
    KeeperException.Code code = ZooKeeperCalls.code(event);
    return switch (code) {
      case OK, BADVERSION, NONODE, NODEEXISTS -> code;
      default -> throw new CompletionException(ZooKeeperCalls.failure(event));
    };
  }

  private static byte[] format(long value, long quarantineMillis) {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("value", value);
    fields.put("quarantineMs", quarantineMillis);
    return NodeFields.encode(fields);
  }
}
