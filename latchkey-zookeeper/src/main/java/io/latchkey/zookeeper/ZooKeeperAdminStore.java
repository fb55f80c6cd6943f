package io.latchkey.zookeeper;

import io.latchkey.ClientInfo;
import io.latchkey.HolderInfo;
import io.latchkey.LatchInfo;
import io.latchkey.LeasedSemaphoreInfo;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.PermitInfo;
import io.latchkey.SemaphoreInfo;
import io.latchkey.spi.AdminStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.LongFunction;
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
 *
 * <p>Semaphores and latches are their counter nodes ({@link ZooKeeperCounters}); a latch's node is
 * deleted at zero. A leased semaphore is its total and its permit nodes, read one after the other
 * (not one snapshot: a monitor's view), the permits in grant order: by creation zxid, which (plus
 * the base of the data, {@link TokenBase}) is their fencing token. A permit's remaining lease is
 * what the node tree tells:
 *
 * <ul>
 *   <li>a TTL permit (explicit lease): its lease ({@code leaseMs}, written into the node) from the
 *       node's creation, by the server's clock; one whose lease has run out is not shown, although
 *       it still counts against the total ({@link ZooKeeperLeasedSemaphoreStore#availablePermits})
 *       until the server deletes it;
 *   <li>an ephemeral permit (watchdog): no deadline exists, since the node lives as long as its
 *       client's session. Shown, as for a lock's holder, is that client's session timeout ({@code
 *       sessionTimeoutMs}, written into the node): the longest the permit outlives its client. A
 *       permit node without it (made by a latchkey before it was written) shows {@link
 *       Duration#ZERO}: not known.
 * </ul>
 */
final class ZooKeeperAdminStore implements AdminStore {
  private final ZooKeeperCalls calls;
  private final ZooKeeperCounters counters;
  private final LockLayout layout;
  private final TokenBase tokenBase;

  ZooKeeperAdminStore(
      ZooKeeperCalls calls, ZooKeeperCounters counters, LockLayout layout, TokenBase tokenBase) {
    this.calls = calls;
    this.tokenBase = tokenBase;
    this.counters = counters;
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
              return present(reads)
                  .thenCompose(
                      read ->
                          tokenBase
                              .current()
                              .thenApply(base -> LockQueue.of(read, LockFence.of(children), base)));
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
                queue.fencingToken(holder)));
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
                queue.fencingToken(holder)));
      }
      if (data.shared() > 0) {
        holders.add(
            new HolderInfo(
                data.owner(),
                data.clientId(),
                LockMode.SHARED,
                data.shared(),
                remaining,
                queue.fencingToken(holder)));
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
    return listAll(ZooKeeperPaths.LOCKS, this::inspect, LockInfo::name);
  }

  @Override
  public CompletableFuture<List<ClientInfo>> clients() {
    return serverTime()
        .thenCompose(
            now ->
                calls
                    .children(ZooKeeperPaths.CLIENTS)
                    .thenCompose(
                        ids ->
                            present(
                                ids.stream()
                                    .map(id -> presence(ZooKeeperPaths.CLIENTS + "/" + id, now))
                                    .toList())));
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

  @Override
  public CompletableFuture<Optional<SemaphoreInfo>> inspectSemaphore(String name) {
    return inspectCounter(
        ZooKeeperPaths.semaphore(name), value -> new SemaphoreInfo(name, Math.toIntExact(value)));
  }

  @Override
  public CompletableFuture<List<SemaphoreInfo>> listSemaphores() {
    return listAll(ZooKeeperPaths.SEMAPHORES, this::inspectSemaphore, SemaphoreInfo::name);
  }

  @Override
  public CompletableFuture<Optional<LatchInfo>> inspectLatch(String name) {
    return inspectCounter(
        ZooKeeperPaths.latch(name), count -> count > 0 ? new LatchInfo(name, count) : null);
  }

  /**
   * @param path a counter's node
   * @param info what its value shows, or null for nothing
   * @return that, or empty if the node does not exist
   */
  private <T> CompletableFuture<Optional<T>> inspectCounter(
      String path, LongFunction<@Nullable T> info) {
    return counters
        .read(path)
        .thenApply(
            counter ->
                counter.exists()
                    ? Optional.ofNullable(info.apply(counter.value()))
                    : Optional.empty());
  }

  @Override
  public CompletableFuture<List<LatchInfo>> listLatches() {
    return listAll(ZooKeeperPaths.LATCHES, this::inspectLatch, LatchInfo::name);
  }

  @Override
  public CompletableFuture<Optional<LeasedSemaphoreInfo>> inspectLeasedSemaphore(String name) {
    return serverTime().thenCompose(now -> leasedSemaphore(name, now));
  }

  @Override
  public CompletableFuture<List<LeasedSemaphoreInfo>> listLeasedSemaphores() {
    return serverTime()
        .thenCompose(
            now ->
                listAll(
                    ZooKeeperPaths.LEASED_SEMAPHORES,
                    name -> leasedSemaphore(name, now),
                    LeasedSemaphoreInfo::name));
  }

  /**
   * @param now the server's clock, read before the permits
   * @return the total and the permits whose leases have not run out, in grant order; empty without
   *     a total
   */
  private CompletableFuture<Optional<LeasedSemaphoreInfo>> leasedSemaphore(String name, long now) {
    String semaphore = ZooKeeperPaths.leasedSemaphore(name);
    return counters
        .read(semaphore)
        .thenCompose(
            total -> {
              if (!total.exists()) {
                return CompletableFuture.completedFuture(Optional.empty());
              }
              return calls
                  .children(semaphore)
                  .thenCompose(
                      children ->
                          tokenBase
                              .current()
                              .thenCompose(
                                  base ->
                                      present(
                                          children.stream()
                                              .filter(
                                                  child ->
                                                      child.startsWith(
                                                          ZooKeeperPaths.PERMIT_PREFIX))
                                              .map(
                                                  child ->
                                                      permit(semaphore + "/" + child, now, base))
                                              .toList())))
                  .thenApply(
                      permits ->
                          Optional.of(
                              new LeasedSemaphoreInfo(
                                  name,
                                  Math.toIntExact(total.value()),
                                  permits.stream()
                                      .sorted(Comparator.comparingLong(PermitInfo::fencingToken))
                                      .toList())));
            });
  }

  /**
   * @param path a permit's node
   * @param now the server's clock, read before the node
   * @param base the base of the tokens ({@link TokenBase})
   * @return the permit, or null if it is gone or its lease has run out
   */
  private CompletableFuture<@Nullable PermitInfo> permit(String path, long now, long base) {
    String node = path.substring(path.lastIndexOf('/') + 1);
    return calls
        .read(path)
        .thenApply(
            read ->
                read == null
                    ? null
                    : ZooKeeperLeasedSemaphoreStore.permitInfo(node, read, now, base));
  }

  /**
   * Lists the records under {@code parent} by inspecting each of its children's names.
   *
   * @param parent the node whose children are the records' segments
   * @param inspect inspects one name
   * @param nameOf a record's name
   * @return the records that exist, by name
   */
  private <T> CompletableFuture<List<T>> listAll(
      String parent,
      Function<String, CompletableFuture<Optional<T>>> inspect,
      Function<T, String> nameOf) {
    return calls
        .children(parent)
        .thenCompose(
            segments ->
                present(
                    segments.stream()
                        .map(ZooKeeperPaths::name)
                        .map(name -> inspect.apply(name).thenApply(found -> found.orElse(null)))
                        .toList()))
        .thenApply(found -> found.stream().sorted(Comparator.comparing(nameOf)).toList());
  }

  /**
   * @param reads reads under way
   * @return their answers once all are in, in the same order, without the nulls (nodes that were
   *     gone)
   */
  private static <T> CompletableFuture<List<T>> present(
      List<CompletableFuture<@Nullable T>> reads) {
    return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new))
        .thenApply(
            done -> reads.stream().map(CompletableFuture::join).filter(Objects::nonNull).toList());
  }
}
