package io.latchkey.redis;

import io.latchkey.ClientInfo;
import io.latchkey.HolderInfo;
import io.latchkey.LatchInfo;
import io.latchkey.LeasedSemaphoreInfo;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.PermitInfo;
import io.latchkey.SemaphoreInfo;
import io.latchkey.spi.AdminStore;
import io.latchkey.spi.ResourceType;
import io.lettuce.core.KeyValue;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The operator's operations on Redis: inspecting and listing locks, semaphores, leased semaphores
 * and latches, force-release and eviction (one script each), and the clients' presence records.
 * Listing finds the records by SCAN (on every master in a cluster) and reads them in batches of one
 * hash slot: a script per batch of locks or leased semaphores, an MGET per batch of counts.
 *
 * <p>A presence record is {@code <prefix>client:<clientId>}, a hash of host, pid and start time
 * that the engine rewrites every third of a lease and that lives a lease and a third: it disappears
 * with the process, about when the leases of the locks it held run out, and is deleted on close. A
 * Redis restart that lost it is repaired by the next heartbeat.
 */
final class RedisAdminStore implements AdminStore {
  /**
   * Records inspected per call when listing, so that no call blocks Redis for long; in a cluster,
   * every call inspects records of one hash slot.
   */
  private static final int INSPECT_BATCH = 500;

  private final RedisCommandConnection redis;
  private final RedisKeys keys;

  RedisAdminStore(RedisCommandConnection redis, RedisKeys keys) {
    this.redis = redis;
    this.keys = keys;
  }

  @Override
  public CompletionStage<Boolean> evict(String name, String owner) {
    return redis
        .<Long>run(
            RedisScript.LOCK_EVICT, ScriptOutputType.INTEGER, keys.lockQueueKeys(name), owner)
        .thenApply(held -> held == 1);
  }

  @Override
  public CompletionStage<List<ClientInfo>> clients() {
    return listClients(redis, keys);
  }

  @Override
  public CompletionStage<Void> heartbeat(ClientInfo self, long timeToLiveMillis) {
    return redis
        .<Long>run(
            RedisScript.PRESENCE,
            ScriptOutputType.INTEGER,
            new String[] {keys.presence(self.clientId())},
            self.host(),
            Long.toString(self.pid()),
            Long.toString(self.startedAt().toEpochMilli()),
            Long.toString(timeToLiveMillis))
        .thenApply(written -> null);
  }

  @Override
  public CompletionStage<Void> leave(String clientId) {
    return redis
        .execute(commands -> commands.del(keys.presence(clientId)))
        .thenApply(deleted -> null);
  }

  @Override
  public CompletionStage<Boolean> forceRelease(String name) {
    String[] scriptKeys = {
      keys.lock(name), keys.lockQueue(name), keys.wakeups(ResourceType.LOCK, name)
    };
    return redis
        .<Long>run(RedisScript.LOCK_FORCE_RELEASE, ScriptOutputType.INTEGER, scriptKeys)
        .thenApply(held -> held == 1);
  }

  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    return inspectAll(List.of(name)).thenApply(found -> found.stream().findFirst());
  }

  @Override
  public CompletionStage<List<LockInfo>> list() {
    return listAll(
        keys.lockScanPattern(), keys::lockName, keys::lock, this::inspectAll, LockInfo::name);
  }

  @Override
  public CompletionStage<Optional<SemaphoreInfo>> inspectSemaphore(String name) {
    return inspectSemaphores(List.of(name)).thenApply(found -> found.stream().findFirst());
  }

  @Override
  public CompletionStage<List<SemaphoreInfo>> listSemaphores() {
    return listAll(
        keys.semaphoreScanPattern(),
        keys::semaphoreName,
        keys::semaphore,
        this::inspectSemaphores,
        SemaphoreInfo::name);
  }

  @Override
  public CompletionStage<Optional<LeasedSemaphoreInfo>> inspectLeasedSemaphore(String name) {
    return inspectLeasedSemaphores(List.of(name)).thenApply(found -> found.stream().findFirst());
  }

  @Override
  public CompletionStage<List<LeasedSemaphoreInfo>> listLeasedSemaphores() {
    return listAll(
        keys.leasedSemaphoreScanPattern(),
        keys::leasedSemaphoreName,
        keys::leasedSemaphore,
        this::inspectLeasedSemaphores,
        LeasedSemaphoreInfo::name);
  }

  @Override
  public CompletionStage<Optional<LatchInfo>> inspectLatch(String name) {
    return inspectLatches(List.of(name)).thenApply(found -> found.stream().findFirst());
  }

  @Override
  public CompletionStage<List<LatchInfo>> listLatches() {
    return listAll(
        keys.latchScanPattern(),
        keys::latchName,
        keys::latch,
        this::inspectLatches,
        LatchInfo::name);
  }

  /**
   * Finds the records of one kind by SCAN (in a cluster, on every master) and inspects them in
   * batches of at most {@link #INSPECT_BATCH} names of one hash slot.
   *
   * @param pattern the SCAN pattern of the kind's main keys
   * @param nameOf the name of a found key, or empty if it is not a main key of ours
   * @param keyOf the main key of a name, whose slot is the slot of all the name's keys
   * @param inspect inspects a batch, answering the records that exist, in any order
   * @param recordName the name of a record
   * @return the records found, by name
   */
  private <T> CompletableFuture<List<T>> listAll(
      String pattern,
      Function<String, Optional<String>> nameOf,
      Function<String, String> keyOf,
      Function<List<String>, CompletableFuture<List<T>>> inspect,
      Function<T, String> recordName) {
    return redis
        .scan(pattern)
        .thenCompose(
            found -> {
              TreeSet<String> names = new TreeSet<>();
              for (String key : found) {
                nameOf.apply(key).ifPresent(names::add);
              }
              List<CompletableFuture<List<T>>> batches = new ArrayList<>();
              for (List<String> group : redis.bySlot(List.copyOf(names), keyOf)) {
                for (int from = 0; from < group.size(); from += INSPECT_BATCH) {
                  batches.add(
                      inspect.apply(
                          group.subList(from, Math.min(group.size(), from + INSPECT_BATCH))));
                }
              }
              return CompletableFuture.allOf(batches.toArray(CompletableFuture<?>[]::new))
                  .thenApply(
                      done -> {
                        List<T> all = new ArrayList<>();
                        batches.forEach(batch -> all.addAll(batch.join()));
                        all.sort(Comparator.comparing(recordName));
                        return all;
                      });
            });
  }

  /** The semaphores among {@code names} that have a record, in the same order. */
  private CompletableFuture<List<SemaphoreInfo>> inspectSemaphores(List<String> names) {
    return counts(names, keys::semaphore)
        .thenApply(
            counts -> {
              List<SemaphoreInfo> found = new ArrayList<>();
              counts.forEach(
                  (name, count) -> found.add(new SemaphoreInfo(name, Math.toIntExact(count))));
              return found;
            });
  }

  /** The latches among {@code names} that count down, in the same order. */
  private CompletableFuture<List<LatchInfo>> inspectLatches(List<String> names) {
    return counts(names, keys::latch)
        .thenApply(
            counts -> {
              List<LatchInfo> found = new ArrayList<>();
              counts.forEach((name, count) -> found.add(new LatchInfo(name, count)));
              return found;
            });
  }

  /**
   * Reads the string counts of {@code names} (all in one hash slot) with one MGET.
   *
   * @return name to count, of the names that have a count, in the order of {@code names}
   */
  private CompletableFuture<Map<String, Long>> counts(
      List<String> names, Function<String, String> keyOf) {
    String[] countKeys = names.stream().map(keyOf).toArray(String[]::new);
    return redis
        .execute(commands -> commands.mget(countKeys))
        .thenApply(
            values -> {
              Map<String, Long> counts = new LinkedHashMap<>();
              for (int i = 0; i < names.size(); i++) {
                KeyValue<String, String> value = values.get(i);
                if (value.hasValue()) {
                  counts.put(names.get(i), Long.parseLong(value.getValue()));
                }
              }
              return counts;
            });
  }

  /** The leased semaphores among {@code names} that have a total, in the same order. */
  private CompletableFuture<List<LeasedSemaphoreInfo>> inspectLeasedSemaphores(List<String> names) {
    String[] scriptKeys = new String[names.size() * 2];
    for (int i = 0; i < names.size(); i++) {
      scriptKeys[2 * i] = keys.leasedSemaphore(names.get(i));
      scriptKeys[2 * i + 1] = keys.leasedPermits(names.get(i));
    }
    return redis
        .<List<?>>run(RedisScript.LEASED_SEMAPHORE_INSPECT, ScriptOutputType.MULTI, scriptKeys)
        .thenApply(
            reply -> {
              List<LeasedSemaphoreInfo> found = new ArrayList<>();
              for (int i = 0; i < names.size(); i++) {
                List<?> info = RedisReplies.array(reply.get(i));
                if (!info.isEmpty()) {
                  found.add(leasedSemaphoreInfo(names.get(i), info));
                }
              }
              return found;
            });
  }

  /** Reads {@code {total, then per permit: id, client, ms left, token}}. */
  private static LeasedSemaphoreInfo leasedSemaphoreInfo(String name, List<?> info) {
    List<PermitInfo> permits = new ArrayList<>();
    for (int i = 1; i + 3 < info.size(); i += 4) {
      permits.add(
          new PermitInfo(
              RedisReplies.text(info.get(i)),
              RedisReplies.text(info.get(i + 1)),
              Duration.ofMillis(RedisReplies.number(info.get(i + 2))),
              RedisReplies.number(info.get(i + 3))));
    }
    return new LeasedSemaphoreInfo(
        name, Math.toIntExact(RedisReplies.number(info.get(0))), permits);
  }

  /** The held locks among {@code names}, in the same order. */
  private CompletableFuture<List<LockInfo>> inspectAll(List<String> names) {
    String[] scriptKeys = new String[names.size() * 4];
    for (int i = 0; i < names.size(); i++) {
      scriptKeys[4 * i] = keys.lock(names.get(i));
      scriptKeys[4 * i + 1] = keys.lockQueue(names.get(i));
      scriptKeys[4 * i + 2] = keys.lockQueueDeadlines(names.get(i));
      scriptKeys[4 * i + 3] = keys.lockQueueWriters(names.get(i));
    }
    return redis
        .<List<?>>run(RedisScript.LOCK_INSPECT, ScriptOutputType.MULTI, scriptKeys)
        .thenApply(
            reply -> {
              List<LockInfo> held = new ArrayList<>();
              for (int i = 0; i < names.size(); i++) {
                List<?> info = RedisReplies.array(reply.get(i));
                if (info.size() > 1) {
                  held.add(lockInfo(names.get(i), info));
                }
              }
              return held;
            });
  }

  /** Reads {@code {queued, then per holding mode: owner, client, mode, holds, ms left, token}}. */
  private static LockInfo lockInfo(String name, List<?> info) {
    List<HolderInfo> holders = new ArrayList<>();
    for (int i = 1; i + 5 < info.size(); i += 6) {
      holders.add(
          new HolderInfo(
              RedisReplies.text(info.get(i)),
              RedisReplies.text(info.get(i + 1)),
              RedisReplies.text(info.get(i + 2)).equals("x") ? LockMode.EXCLUSIVE : LockMode.SHARED,
              Math.toIntExact(RedisReplies.number(info.get(i + 3))),
              Duration.ofMillis(RedisReplies.number(info.get(i + 4))),
              RedisReplies.number(info.get(i + 5))));
    }
    return new LockInfo(name, holders, Math.toIntExact(RedisReplies.number(info.get(0))));
  }

  /**
   * Reads every presence record under the prefix of {@code keys} (in a cluster, on every master).
   *
   * @return the live clients, by client id
   */
  private static CompletableFuture<List<ClientInfo>> listClients(
      RedisCommandConnection redis, RedisKeys keys) {
    return redis
        .scan(keys.presenceScanPattern())
        .thenCompose(
            found -> {
              List<CompletableFuture<@Nullable ClientInfo>> reads = new ArrayList<>();
              for (String key : new TreeSet<>(found)) {
                reads.add(read(redis, key, keys.clientId(key)));
              }
              return CompletableFuture.allOf(reads.toArray(CompletableFuture<?>[]::new))
                  .thenApply(
                      done -> {
                        List<ClientInfo> live = new ArrayList<>();
                        for (CompletableFuture<@Nullable ClientInfo> read : reads) {
                          ClientInfo client = read.join();
                          if (client != null) {
                            live.add(client);
                          }
                        }
                        live.sort(Comparator.comparing(ClientInfo::clientId));
                        return live;
                      });
            });
  }

  /** Returns null if the record vanished since the scan or is not one of ours. */
  private static CompletableFuture<@Nullable ClientInfo> read(
      RedisCommandConnection redis, String key, String clientId) {
    return redis
        .execute(commands -> commands.hgetall(key))
        .thenApply(
            record -> {
              String host = record.get("host");
              String pid = record.get("pid");
              String startedAt = record.get("started");
              if (host == null || pid == null || startedAt == null) {
                return null;
              }
              try {
                return new ClientInfo(
                    clientId,
                    host,
                    Long.parseLong(pid),
                    Instant.ofEpochMilli(Long.parseLong(startedAt)));
              } catch (NumberFormatException e) {
                return null;
              }
            });
  }
}
