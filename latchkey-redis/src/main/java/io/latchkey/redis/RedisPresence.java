package io.latchkey.redis;

import io.latchkey.ClientInfo;
import io.lettuce.core.ScriptOutputType;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This client's presence record: {@code <prefix>client:<clientId>}, a hash of host, pid and start
 * time that lives one lease plus one refresh period and is rewritten every third of a lease (so a
 * Redis restart that lost it is repaired within a period). It disappears with the process, about
 * when the leases of the locks it held run out, and is deleted on close.
 */
final class RedisPresence {
  private static final Logger LOG = LoggerFactory.getLogger(RedisPresence.class);

  private final RedisCommandConnection redis;
  private final String key;
  private final String started = Long.toString(Instant.now().toEpochMilli());
  private final long periodMillis;
  private final long timeToLiveMillis;
  private @Nullable ScheduledFuture<?> refresher;

  RedisPresence(RedisCommandConnection redis, RedisKeys keys, String clientId, Duration leaseTime) {
    this.redis = redis;
    this.key = keys.presence(clientId);
    this.periodMillis = Math.max(1, leaseTime.toMillis() / 3);
    this.timeToLiveMillis = leaseTime.toMillis() + periodMillis;
  }

  /** Writes the record now and then every period, on {@code scheduler}. */
  synchronized void start(ScheduledExecutorService scheduler) {
    refresher =
        scheduler.scheduleAtFixedRate(this::refresh, 0, periodMillis, TimeUnit.MILLISECONDS);
  }

  private void refresh() {
    redis
        .run(
            RedisScript.PRESENCE,
            ScriptOutputType.INTEGER,
            new String[] {key},
            LocalProcess.HOST,
            Long.toString(LocalProcess.PID),
            started,
            Long.toString(timeToLiveMillis))
        .exceptionally(
            failure -> {
              LOG.debug("could not refresh the presence record {}: {}", key, failure.toString());
              return null;
            });
  }

  /**
   * Stops refreshing and deletes the record, waiting at most {@code timeout}. The delete runs on
   * {@code scheduler} after any refresh in progress, so that no refresh can write the record again.
   */
  void stop(ScheduledExecutorService scheduler, Duration timeout) {
    synchronized (this) {
      if (refresher != null) {
        refresher.cancel(false);
      }
    }
    try {
      CompletableFuture.completedFuture(key)
          .thenComposeAsync(record -> redis.execute(commands -> commands.del(record)), scheduler)
          .get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.debug(
          "could not delete the presence record {}; it expires by itself: {}", key, e.toString());
    }
  }

  /**
   * Reads every presence record under the prefix of {@code keys} (in a cluster, on every master).
   *
   * @return the live clients, by client id
   */
  static CompletableFuture<List<ClientInfo>> list(RedisCommandConnection redis, RedisKeys keys) {
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

  /** What the presence record says about this process; read once. */
  private static final class LocalProcess {
    static final String HOST = hostName();
    static final long PID = ProcessHandle.current().pid();

    private static String hostName() {
      try {
        return InetAddress.getLocalHost().getHostName();
      } catch (UnknownHostException e) {
        return "unknown";
      }
    }
  }
}
