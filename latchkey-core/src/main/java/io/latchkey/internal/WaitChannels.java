package io.latchkey.internal;

import io.latchkey.spi.ResourceType;
import io.latchkey.spi.Wakeup;
import io.latchkey.spi.WakeupBus;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * The local side of waiting: one backend subscription per resource per client, shared by all of
 * this client's waiters on it, and a FIFO of those waiters.
 *
 * <p>A wake-up for n slots wakes the first n waiters that are not already awake, never the whole
 * herd; a shared-mode waiter woken for a slot brings the shared-mode waiters behind it (they can
 * all enter together) up to the first exclusive-mode waiter, which the backend lets readers behind
 * it not pass (read-write locks prefer writers). A wake-up aimed at one owner (the head of a fair
 * queue) wakes only that owner's waiter. A waiter that leaves without using its wake-up passes it
 * on to the next one.
 */
final class WaitChannels {
  private final WakeupBus bus;
  private final BackendCalls calls;
  private final Map<Key, Channel> channels = new HashMap<>();

  WaitChannels(WakeupBus bus, BackendCalls calls) {
    this.bus = bus;
    this.calls = calls;
  }

  synchronized Waiter join(ResourceType type, String name, @Nullable String owner, boolean shared) {
    Key key = new Key(type, name);
    Channel channel = channels.get(key);
    if (channel == null) {
      Channel created = new Channel(key);
      created.subscription =
          calls.call(
              () ->
                  "subscribe to "
                      + type.name().toLowerCase(java.util.Locale.ROOT)
                      + " '"
                      + name
                      + "'",
              () -> bus.subscribe(type, name, wakeup -> deliver(created, wakeup)));
      channels.put(key, created);
      channel = created;
    }
    Waiter waiter = new Waiter(channel, owner, shared);
    channel.waiters.add(waiter);
    return waiter;
  }

  /** Returns the waiter's signal for its coming wait: fresh, unless a wake-up already arrived. */
  synchronized CompletableFuture<Void> arm(Waiter waiter) {
    if (waiter.signal.isDone()) {
      waiter.signal = new CompletableFuture<>();
      waiter.wokenByRelease = false;
    }
    return waiter.signal;
  }

  // Handler futures left unread on purpose: unsubscribing is best effort: the channel is already
  // forgotten.
  @SuppressWarnings("FutureReturnValueIgnored")
  void leave(Waiter waiter, boolean succeeded) {
    List<CompletableFuture<Void>> toWake = new ArrayList<>();
    synchronized (this) {
      Channel channel = waiter.channel;
      if (!channel.waiters.remove(waiter)) {
        return;
      }
      if (!succeeded && waiter.wokenByRelease) {
        pick(channel, Wakeup.of(1), toWake);
      }
      if (channel.waiters.isEmpty() && channels.get(channel.key) == channel) {
        channels.remove(channel.key);
        channel.subscription.thenAccept(subscription -> subscription.unsubscribe());
      }
    }
    toWake.forEach(signal -> signal.complete(null));
  }

  private void deliver(Channel channel, Wakeup wakeup) {
    List<CompletableFuture<Void>> toWake = new ArrayList<>();
    synchronized (this) {
      pick(channel, wakeup, toWake);
    }
    toWake.forEach(signal -> signal.complete(null));
  }

  /** Chooses whom a wake-up serves; called with the monitor held. */
  private static void pick(Channel channel, Wakeup wakeup, List<CompletableFuture<Void>> toWake) {
    int slots = wakeup.slots();
    boolean sharedRound = false;
    for (Waiter waiter : channel.waiters) {
      if (wakeup.targetOwner() != null && !wakeup.targetOwner().equals(waiter.owner)) {
        continue;
      }
      // A waiting writer ends the shared round: the readers behind it would only be refused.
      sharedRound &= waiter.shared;
      if (waiter.signal.isDone()) {
        continue;
      }
      if (slots <= 0 && !(sharedRound && waiter.shared)) {
        continue;
      }
      waiter.wokenByRelease = true;
      toWake.add(waiter.signal);
      if (slots > 0) {
        slots--;
        sharedRound |= waiter.shared;
      }
    }
  }

  private record Key(ResourceType type, String name) {}

  private static final class Channel {
    final Key key;
    final LinkedHashSet<Waiter> waiters = new LinkedHashSet<>();
    CompletableFuture<WakeupBus.Subscription> subscription = new CompletableFuture<>();

    Channel(Key key) {
      this.key = key;
    }
  }

  /**
   * One waiting acquisition. Its signal is a future completed by a wake-up or by its re-check
   * timer; {@link WaitChannels#arm} replaces a used signal before each attempt, so a wake-up that
   * arrives while an attempt is on the wire is not lost.
   */
  static final class Waiter {
    private final Channel channel;
    private final @Nullable String owner;
    private final boolean shared;
    // Guarded by the WaitChannels monitor, like the channel's waiter set.
    private CompletableFuture<Void> signal = new CompletableFuture<>();
    private boolean wokenByRelease;

    private Waiter(Channel channel, @Nullable String owner, boolean shared) {
      this.channel = channel;
      this.owner = owner;
      this.shared = shared;
    }

    /** Completes once the subscription is active. */
    CompletableFuture<Void> ready() {
      return channel.subscription.thenApply(subscription -> null);
    }
  }
}
