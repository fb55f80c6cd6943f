package io.latchkey.redis;

import io.latchkey.spi.ResourceType;
import io.latchkey.spi.Wakeup;
import io.latchkey.spi.WakeupBus;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.pubsub.api.async.RedisPubSubAsyncCommands;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wake-ups over Redis pub/sub: one channel per resource ({@link RedisKeys#wakeups}), on which the
 * release scripts publish {@code <slots>} or {@code <slots> <owner>}, where slots is a count or
 * {@code all}.
 *
 * <p>One pub/sub connection serves every channel of the backend; Lettuce re-subscribes after it
 * reconnects. A message lost meanwhile is covered by the engine's bounded re-check. On a Redis
 * Cluster of version 7 or later the channels are shard channels (SSUBSCRIBE; the scripts SPUBLISH),
 * so that a wake-up travels only within the shard of its resource instead of over the whole cluster
 * bus; Lettuce sends each SSUBSCRIBE to the master of the channel's slot. After a fail-over the
 * subscription stays on the demoted master, which as a replica still receives the shard's messages.
 * When a resharding moves the slot to another shard, its old master ends the subscription (an
 * SUNSUBSCRIBE we did not ask for), and the channel is subscribed again where the slot now lives.
 *
 * <p>The engine subscribes while it has waiters on a resource and unsubscribes when the last one
 * leaves, which under contention is every few milliseconds. So a channel without listeners lingers
 * for {@link #LINGER} before it is unsubscribed, and a subscribe meanwhile reuses it at once. The
 * table changes under this object's monitor, and SUBSCRIBE and UNSUBSCRIBE are issued from one
 * thread in the same order, so that an unsubscribe cannot overtake a later subscribe of the same
 * channel and leave it silent.
 */
final class RedisWakeups implements WakeupBus {
  private static final Logger LOG = LoggerFactory.getLogger(RedisWakeups.class);

  /** How long a channel without listeners stays subscribed. */
  private static final Duration LINGER = Duration.ofSeconds(5);

  private final StatefulRedisPubSubConnection<String, String> connection;
  private final boolean sharded;
  private final RedisKeys keys;
  private final ScheduledExecutorService subscriber;
  private final Map<String, Channel> channels = new ConcurrentHashMap<>();
  private final Map<String, Consumer<String>> ownChannels = new ConcurrentHashMap<>();

  /**
   * @param connection the pub/sub connection
   * @param sharded whether to subscribe to shard channels (SSUBSCRIBE)
   * @param keys the key layout
   * @param subscriber a single thread that issues SUBSCRIBE and UNSUBSCRIBE in order
   */
  RedisWakeups(
      StatefulRedisPubSubConnection<String, String> connection,
      boolean sharded,
      RedisKeys keys,
      ScheduledExecutorService subscriber) {
    this.connection = connection;
    this.sharded = sharded;
    this.keys = keys;
    this.subscriber = subscriber;
    connection.addListener(
        new RedisPubSubAdapter<>() {
          @Override
          public void message(String channel, String message) {
            Consumer<String> own = ownChannels.get(channel);
            if (own != null) {
              own.accept(message);
            } else {
              deliver(channel, message);
            }
          }

          @Override
          public void smessage(String channel, String message) {
            deliver(channel, message);
          }

          @Override
          public void sunsubscribed(String channel, long count) {
            resubscribeIfUsed(channel);
          }
        });
  }

  @Override
  public CompletionStage<Subscription> subscribe(
      ResourceType type, String name, Consumer<Wakeup> listener) {
    String channelName = keys.wakeups(type, name);
    Channel channel;
    synchronized (this) {
      channel = channels.get(channelName);
      if (channel == null) {
        Channel created = new Channel();
        channels.put(channelName, created);
        subscriber.execute(
            () ->
                subscribeCommand(channelName)
                    .whenComplete(
                        (ok, failure) -> {
                          if (failure == null) {
                            created.active.complete(null);
                          } else {
                            channels.remove(channelName, created);
                            created.active.completeExceptionally(failure);
                          }
                        }));
        channel = created;
      }
      channel.listeners.add(listener);
    }
    Channel subscribed = channel;
    return subscribed.active.thenApply(
        active -> () -> unsubscribe(channelName, subscribed, listener));
  }

  /**
   * Subscribes one listener to a classic channel (SUBSCRIBE, also in a cluster) that this backend
   * alone listens to, such as its client's revocation requests: no sharing, no lingering.
   *
   * @param channelName the channel
   * @param listener receives each message; must not block
   * @return the active subscription
   */
  CompletionStage<Subscription> subscribeOwnChannel(String channelName, Consumer<String> listener) {
    if (ownChannels.putIfAbsent(channelName, listener) != null) {
      throw new IllegalStateException("channel " + channelName + " has a listener already");
    }
    return inOrder(commands -> commands.subscribe(channelName))
        .whenComplete(
            (ok, failure) -> {
              if (failure != null) {
                ownChannels.remove(channelName, listener);
              }
            })
        .thenApply(
            subscribed ->
                () -> {
                  ownChannels.remove(channelName, listener);
                  return inOrder(commands -> commands.unsubscribe(channelName));
                });
  }

  /**
   * Sends a pub/sub command from the subscriber thread, in order with every SUBSCRIBE and
   * UNSUBSCRIBE.
   *
   * @return completes with the command's answer; fails if the backend is closed
   */
  private CompletableFuture<Void> inOrder(
      Function<RedisPubSubAsyncCommands<String, String>, RedisFuture<Void>> command) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    try {
      subscriber.execute(
          () ->
              command
                  .apply(connection.async())
                  .whenComplete(
                      (ok, failure) -> {
                        if (failure == null) {
                          done.complete(null);
                        } else {
                          done.completeExceptionally(failure);
                        }
                      }));
    } catch (RejectedExecutionException closed) {
      done.completeExceptionally(closed); // the backend is closed, and its connection with it
    }
    return done;
  }

  /**
   * Removes a listener. The last one leaves the channel lingering: it is unsubscribed {@link
   * #LINGER} after that (at most one pending check per channel) if it has no listener then.
   */
  // Futures left unread on purpose: the lingering check is a fire-and-forget task that logs its own
  // failures.
  @SuppressWarnings("FutureReturnValueIgnored")
  private CompletionStage<Void> unsubscribe(
      String channelName, Channel channel, Consumer<Wakeup> listener) {
    synchronized (this) {
      if (channel.listeners.remove(listener)
          && channel.listeners.isEmpty()
          && !channel.unsubscribeScheduled) {
        channel.unsubscribeScheduled = true;
        try {
          subscriber.schedule(
              () -> unsubscribeIfUnused(channelName, channel),
              LINGER.toNanos(),
              TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closed) {
          // The backend is closed, and its pub/sub connection with it.
        }
      }
    }
    return CompletableFuture.completedFuture(null);
  }

  /** Runs on the subscriber thread, so UNSUBSCRIBE goes out in order with every SUBSCRIBE. */
  private synchronized void unsubscribeIfUnused(String channelName, Channel channel) {
    channel.unsubscribeScheduled = false;
    if (channel.listeners.isEmpty() && channels.remove(channelName, channel)) {
      RedisPubSubAsyncCommands<String, String> commands = connection.async();
      (sharded ? commands.sunsubscribe(channelName) : commands.unsubscribe(channelName))
          .exceptionally(
              failure -> {
                LOG.debug("could not unsubscribe from {}: {}", channelName, failure.toString());
                return null;
              });
    }
  }

  private RedisFuture<Void> subscribeCommand(String channelName) {
    RedisPubSubAsyncCommands<String, String> commands = connection.async();
    return sharded ? commands.ssubscribe(channelName) : commands.subscribe(channelName);
  }

  /**
   * A shard channel that is still in the table was unsubscribed by the server, not by us (we remove
   * a channel from the table before unsubscribing it): its slot moved. Subscribes it again, on the
   * subscriber thread so that it stays in order with our own SSUBSCRIBE and SUNSUBSCRIBE.
   */
  private void resubscribeIfUsed(String channelName) {
    try {
      subscriber.execute(
          () -> {
            if (channels.containsKey(channelName)) {
              subscribeCommand(channelName)
                  .exceptionally(
                      failure -> {
                        LOG.debug(
                            "could not subscribe again to {}: {}", channelName, failure.toString());
                        return null;
                      });
            }
          });
    } catch (RejectedExecutionException closed) {
      // The backend is closed, and its pub/sub connection with it.
    }
  }

  private void deliver(String channelName, String message) {
    Channel channel = channels.get(channelName);
    if (channel == null) {
      return;
    }
    Wakeup wakeup;
    try {
      wakeup = parse(message);
    } catch (IllegalArgumentException e) {
      LOG.warn("ignoring a malformed wake-up on {}: '{}'", channelName, message);
      return;
    }
    for (Consumer<Wakeup> listener : channel.listeners) {
      listener.accept(wakeup);
    }
  }

  /**
   * @param message {@code <slots>} or {@code <slots> <owner>}
   * @return the wake-up it encodes
   * @throws IllegalArgumentException if it encodes none
   */
  static Wakeup parse(String message) {
    int space = message.indexOf(' ');
    String slots = space < 0 ? message : message.substring(0, space);
    int count = slots.equals("all") ? Wakeup.ALL : Integer.parseInt(slots);
    if (count <= 0) {
      throw new IllegalArgumentException("a wake-up serves at least one waiter");
    }
    return space < 0 ? Wakeup.of(count) : new Wakeup(count, message.substring(space + 1));
  }

  /** The local side of one subscribed channel. */
  private static final class Channel {
    final CompletableFuture<Void> active = new CompletableFuture<>();
    final List<Consumer<Wakeup>> listeners = new CopyOnWriteArrayList<>();
    // Guarded by the RedisWakeups monitor.
    boolean unsubscribeScheduled;
  }
}
