package io.latchkey.zookeeper;

import io.latchkey.ClientInfo;
import io.latchkey.HolderInfo;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.spi.AdminStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.jspecify.annotations.Nullable;

/**
 * The operator's view, read from the node tree: a lock's holders are the nodes at the front of its
 * directory ({@link LockQueue}), its waiters the rest. A holder's "remaining lease" is the session
 * timeout of the client that made its node: the longest the node outlives that client.
 *
 * <p>Presence records are ephemeral nodes under {@code /clients}, so a dead client's record goes
 * with its session; each also carries its time to live and counts as gone once the server's clock
 * passes its last write plus that time (the server's time is read by writing {@code /clock}).
 */
final class ZooKeeperAdminStore implements AdminStore {
  private final ZooKeeperCalls calls;
  private final LockLayout layout;

  ZooKeeperAdminStore(ZooKeeperCalls calls, LockLayout layout) {
    this.calls = calls;
    this.layout = layout;
  }

  /**
   * @param name a lock name
   * @return its directory read whole, its fence record included
   */
  CompletableFuture<LockQueue> load(String name) {
    String dir = layout.dir(name);
    return calls
        .children(dir)
        .thenCompose(
            children -> {
              List<LockNode> nodes = LockNode.sorted(children);
              List<CompletableFuture<LockQueue.@Nullable Read>> reads = new ArrayList<>();
              for (LockNode node : nodes) {
                String path = dir + "/" + node.name();
                reads.add(
                    calls
                        .read(path)
                        .thenApply(
                            read ->
                                read == null
                                    ? null
                                    : new LockQueue.Read(
                                        node,
                                        path,
                                        node.isLatchkeys()
                                            ? LockNodeData.decode(read.data())
                                            : null,
                                        read.stat())));
              }
              return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new))
                  .thenApply(
                      done ->
                          LockQueue.of(
                              reads.stream()
                                  .map(CompletableFuture::join)
                                  .filter(Objects::nonNull)
                                  .toList(),
                              LockFence.of(children)));
            });
  }

  @Override
  public CompletableFuture<Boolean> forceRelease(String name) {
    return load(name)
        .thenCompose(
            queue -> {
              List<CompletableFuture<KeeperException.Code>> deletes =
                  queue.holders().stream().map(holder -> calls.delete(holder.path(), -1)).toList();
              return CompletableFuture.allOf(deletes.toArray(CompletableFuture[]::new))
                  .thenApply(
                      done ->
                          deletes.stream()
                              .anyMatch(delete -> delete.join() == KeeperException.Code.OK));
            });
  }

  @Override
  public CompletableFuture<Boolean> evict(String name, String owner) {
    String digest = ZooKeeperPaths.ownerDigest(owner);
    return load(name)
        .thenCompose(
            queue -> {
              for (LockQueue.Entry holder : queue.holders()) {
                if (digest.equals(holder.node().ownerDigest())) {
                  return calls
                      .delete(holder.path(), -1)
                      .thenApply(code -> code == KeeperException.Code.OK);
                }
              }
              return CompletableFuture.completedFuture(false);
            });
  }

  @Override
  public CompletableFuture<Optional<LockInfo>> inspect(String name) {
    return load(name).thenApply(queue -> info(name, queue));
  }

  private static Optional<LockInfo> info(String name, LockQueue queue) {
    List<HolderInfo> holders = new ArrayList<>();
    for (LockQueue.Entry holder : queue.holders()) {
      LockNodeData data = holder.data();
      if (data == null) {
        holders.add(
            new HolderInfo(
                "foreign:" + holder.node().name(),
                "",
                holder.node().createdExclusive() ? LockMode.EXCLUSIVE : LockMode.SHARED,
                1,
                Duration.ZERO,
                holder.fencingToken()));
        continue;
      }
      Duration remaining = Duration.ofMillis(data.sessionTimeoutMillis());
      if (data.exclusive() > 0) {
        holders.add(
            new HolderInfo(
                data.owner(),
                data.clientId(),
                LockMode.EXCLUSIVE,
                data.exclusive(),
                remaining,
                holder.fencingToken()));
      }
      if (data.shared() > 0) {
        holders.add(
            new HolderInfo(
                data.owner(),
                data.clientId(),
                LockMode.SHARED,
                data.shared(),
                remaining,
                holder.fencingToken()));
      }
    }
    return holders.isEmpty()
        ? Optional.empty()
        : Optional.of(new LockInfo(name, holders, queue.waiting()));
  }

  @Override
  public CompletableFuture<List<LockInfo>> list() {
    if (!layout.listable()) {
      // A Curator layout's locks are anywhere in the tree: only a named lock can be inspected.
      return CompletableFuture.completedFuture(List.of());
    }
    return calls
        .children(ZooKeeperPaths.LOCKS)
        .thenCompose(
            segments -> {
              List<CompletableFuture<Optional<LockInfo>>> infos =
                  segments.stream().map(ZooKeeperPaths::name).map(this::inspect).toList();
              return CompletableFuture.allOf(infos.toArray(CompletableFuture[]::new))
                  .thenApply(
                      done ->
                          infos.stream()
                              .map(CompletableFuture::join)
                              .flatMap(Optional::stream)
                              .toList());
            });
  }

  @Override
  public CompletableFuture<List<ClientInfo>> clients() {
    return serverTime()
        .thenCompose(
            now ->
                calls
                    .children(ZooKeeperPaths.CLIENTS)
                    .thenCompose(
                        ids -> {
                          List<CompletableFuture<@Nullable ClientInfo>> reads =
                              ids.stream()
                                  .map(id -> presence(ZooKeeperPaths.CLIENTS + "/" + id, now))
                                  .toList();
                          return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new))
                              .thenApply(
                                  done ->
                                      reads.stream()
                                          .map(CompletableFuture::join)
                                          .filter(Objects::nonNull)
                                          .toList());
                        }));
  }

  private CompletableFuture<@Nullable ClientInfo> presence(String path, long now) {
    return calls
        .read(path)
        .thenApply(
            read -> {
              if (read == null) {
                return null;
              }
              Map<String, String> fields = NodeFields.decode(read.data());
              long ttl = Long.parseLong(fields.getOrDefault("ttlMs", "0"));
              if (read.stat().getMtime() + ttl <= now) {
                return null;
              }
              return new ClientInfo(
                  fields.getOrDefault("client", ""),
                  fields.getOrDefault("host", ""),
                  Long.parseLong(fields.getOrDefault("pid", "0")),
                  Instant.ofEpochMilli(Long.parseLong(fields.getOrDefault("startedAt", "0"))));
            });
  }

  /** The server's clock: the modification time of a write made now. */
  private CompletableFuture<Long> serverTime() {
    byte[] nothing = new byte[0];
    return calls
        .touch(ZooKeeperPaths.CLOCK, nothing)
        .thenCompose(
            stat ->
                stat != null
                    ? CompletableFuture.completedFuture(stat.getMtime())
                    : calls
                        .create(ZooKeeperPaths.CLOCK, nothing, CreateMode.PERSISTENT)
                        .thenCompose(created -> serverTime()));
  }

  @Override
  public CompletableFuture<Void> heartbeat(ClientInfo self, long timeToLiveMillis) {
    String path = ZooKeeperPaths.client(self.clientId());
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("client", self.clientId());
    fields.put("host", self.host());
    fields.put("pid", self.pid());
    fields.put("startedAt", self.startedAt().toEpochMilli());
    fields.put("ttlMs", timeToLiveMillis);
    byte[] data = NodeFields.encode(fields);
    return calls
        .touch(path, data)
        .thenCompose(
            stat ->
                stat != null
                    ? CompletableFuture.completedFuture(null)
                    : calls
                        .create(path, data, CreateMode.EPHEMERAL)
                        .thenCompose(
                            created ->
                                created.ok()
                                    ? CompletableFuture.completedFuture(null)
                                    : calls.touch(path, data).thenApply(again -> null)));
  }

  @Override
  public CompletableFuture<Void> leave(String clientId) {
    return calls.delete(ZooKeeperPaths.client(clientId), -1).thenApply(code -> null);
  }
}
