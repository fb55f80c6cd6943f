package io.latchkey.internal;

import io.latchkey.LockMode;
import io.latchkey.spi.LockRequest;
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
 *
 * <p>A waiter must not miss a wake-up sent after its last refused attempt. Usually it tries once
 * more after joining, since the subscription may have started after that attempt. When the channel
 * was already subscribed before the first attempt went out ({@link #peek}), the channel itself
 * remembers the wake-ups that found no waiter to serve (aimed at an owner that had not joined yet,
 * or open to anyone), and a waiter joining after such a wake-up is woken at once; otherwise it goes
 * straight to sleep, saving that extra attempt.
 *
 * <p>A lock's channel also knows which grant of this client holds the lock exclusively, once it was
 * granted while the channel existed. An exclusive, unfair waiter that finds another owner of this
 * client holding it waits behind that holder locally ({@link #joinBehindLocalHolder}): it makes no
 * attempt and takes no place in the backend's queue, and is handed the lock by the holder's release
 * ({@link #claimNext}), or woken to try by itself when that hold ends without handing it over
 * ({@link #exclusiveEnded}). Wake-ups from the backend are never aimed at it (it has no place
 * there).
 */
final class WaitChannels {
  /** How many unserved owner-aimed wake-ups a channel remembers (it forgets the oldest). */
  private static final int MAX_REMEMBERED_MISSES = 64;

  private final WakeupBus bus;
  private final BackendCalls calls;
  private final Map<Key, Channel> channels = new HashMap<>();
  // Guarded by the monitor: numbers every wake-up delivered, on any channel.
  private long deliveries;

  WaitChannels(WakeupBus bus, BackendCalls calls) {
    this.bus = bus;
    this.calls = calls;
  }

  /**
   * What a waiter about to make its first attempt sees: the channel, if it exists with its
   * subscription active, and how many wake-ups had been delivered by then; null otherwise.
   */
  synchronized @Nullable Sighting peek(ResourceType type, String name) {
    Channel channel = channel(type, name);
    if (channel == null
        || !channel.subscription.isDone()
        || channel.subscription.isCompletedExceptionally()) {
      return null;
    }
    return new Sighting(channel, deliveries);
  }

  /**
   * Joins the waiters of a resource.
   *
   * @param seen what {@link #peek} saw before the waiter's first attempt, or null
   * @param acquisition the waiting acquisition, which a release of this client may claim for a
   *     hand-over ({@link #claimNext})
   */
  synchronized Waiter join(
      ResourceType type,
      String name,
      @Nullable String owner,
      boolean shared,
      @Nullable Sighting seen,
      Acquisition<?> acquisition) {
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
    Waiter waiter = new Waiter(channel, owner, shared, acquisition);
    channel.waiters.add(waiter);
    if (seen != null && seen.channel == channel) {
      waiter.caughtUp = true;
      Long missedAt = owner == null ? null : channel.missedByOwner.remove(owner);
      if ((missedAt != null && missedAt > seen.deliveries)
          || channel.lastOpenWakeup > seen.deliveries) {
        waiter.wokenByRelease = true;
        waiter.signal.complete(null);
      }
    }
    return waiter;
  }

  /**
   * The signal of a waiter that joined a channel subscribed since before its first attempt (see
   * {@link #peek}): it may sleep on it at once, without another attempt (a wake-up it missed has
   * completed it already). Null if it must try again first.
   */
  synchronized @Nullable CompletableFuture<Void> caughtUpSignal(Waiter waiter) {
    return waiter.caughtUp ? waiter.signal : null;
  }

  /**
   * Joins the waiters of a lock as a local waiter, if another owner of this client holds it
   * exclusively as far as its channel knows: the waiter then sleeps on its signal without any
   * attempt, until the holder's release hands the lock over to it or the hold ends ({@link
   * #exclusiveEnded}) and wakes it to try by itself.
   *
   * @return the joined waiter, or null if no such holder is known (the waiter tries as usual)
   */
  synchronized @Nullable Waiter joinBehindLocalHolder(
      String name, String owner, Acquisition<?> acquisition) {
    Channel channel = channel(ResourceType.LOCK, name);
    if (channel == null) {
      return null;
    }
    Hold holder = channel.localHolder;
    if (holder == null
        || holder.ref.holderId().equals(owner)
        || holder.lost() != null
        || holder.holds(LockMode.EXCLUSIVE) == 0) {
      return null;
    }
    Waiter waiter = new Waiter(channel, owner, false, acquisition);
    waiter.local = true;
    waiter.caughtUp = true; // it sleeps at once: only this client's own release can let it in
    channel.waiters.add(waiter);
    return waiter;
  }

  /**
   * A grant of this client now holds a lock exclusively: waiters that come to its channel may wait
   * behind it locally. Known only to a channel that exists (someone of this client waits, or waited
   * while the previous holder held it).
   */
  synchronized void exclusiveGranted(Hold hold) {
    Channel channel = channel(ResourceType.LOCK, hold.ref.name());
    if (channel != null) {
      channel.localHolder = hold;
    }
  }

  /**
   * A grant of this client no longer holds a lock exclusively (its last exclusive hold was
   * released, or it was lost). If it was the holder its channel knew, the waiters behind it locally
   * are woken to try by themselves: whatever the release did, nobody of this client holds the lock
   * now.
   */
  void exclusiveEnded(Hold hold) {
    List<CompletableFuture<Void>> toWake;
    synchronized (this) {
      Channel channel = channel(ResourceType.LOCK, hold.ref.name());
      if (channel == null || channel.localHolder != hold) {
        return;
      }
      channel.localHolder = null;
      toWake = new ArrayList<>();
      for (Waiter waiter : channel.waiters) {
        if (waiter.local && !waiter.signal.isDone()) {
          toWake.add(waiter.signal);
        }
      }
      if (channel.waiters.isEmpty()) {
        forget(channel);
      }
    }
    toWake.forEach(signal -> signal.complete(null));
  }

  /**
   * Claims the first sleeping waiter of this client on a lock, other than the releasing owner, for
   * a release that hands the lock over to it ({@link Acquisition#claimForHandOver}).
   *
   * @param name the lock name
   * @param releasingOwner the owner whose release will carry the waiter's attempt
   * @return the claimed waiter and the attempt to carry, or null if none can be claimed
   */
  synchronized @Nullable HandOver claimNext(String name, String releasingOwner) {
    Channel channel = channel(ResourceType.LOCK, name);
    if (channel == null) {
      return null;
    }
    for (Waiter waiter : channel.waiters) {
      if (waiter.owner == null || waiter.owner.equals(releasingOwner)) {
        continue;
      }
      LockRequest request = waiter.acquisition.claimForHandOver();
      if (request != null) {
        return new HandOver(waiter.acquisition, request);
      }
    }
    return null;
  }

  /**
   * A waiter claimed for a hand-over, and the attempt the release carries for it.
   *
   * @param acquisition the claimed waiter, told the outcome by {@link Acquisition#handedOver}
   * @param request its attempt
   */
  record HandOver(Acquisition<?> acquisition, LockRequest request) {}

  /** Returns the waiter's signal for its coming wait: fresh, unless a wake-up already arrived. */
  synchronized CompletableFuture<Void> arm(Waiter waiter) {
    waiter.local = false; // it tries now, and waits as any other waiter from then on
    if (waiter.signal.isDone()) {
      waiter.signal = new CompletableFuture<>();
      waiter.wokenByRelease = false;
    }
    return waiter.signal;
  }

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
      if (channel.waiters.isEmpty() && channel.localHolder == null) {
        forget(channel);
      }
    }
    toWake.forEach(signal -> signal.complete(null));
  }

  /** Drops a channel nobody waits on; called with the monitor held. */
  // Handler futures left unread on purpose: unsubscribing is best effort: the channel is already
  // forgotten.
  @SuppressWarnings("FutureReturnValueIgnored")
  private void forget(Channel channel) {
    if (channels.get(channel.key) == channel) {
      channels.remove(channel.key);
      channel.subscription.thenAccept(subscription -> subscription.unsubscribe());
    }
  }

  private void deliver(Channel channel, Wakeup wakeup) {
    List<CompletableFuture<Void>> toWake = new ArrayList<>();
    synchronized (this) {
      deliveries++;
      boolean served = pick(channel, wakeup, toWake);
      String target = wakeup.targetOwner();
      if (target == null) {
        channel.lastOpenWakeup = deliveries;
      } else if (!served) {
        if (channel.missedByOwner.size() >= MAX_REMEMBERED_MISSES) {
          channel.missedByOwner.clear();
        }
        channel.missedByOwner.put(target, deliveries);
      }
    }
    toWake.forEach(signal -> signal.complete(null));
  }

  /**
   * Chooses whom a wake-up serves; called with the monitor held. Returns whether a waiter of the
   * wake-up's target owner was found (always true for a wake-up without one).
   */
  private static boolean pick(
      Channel channel, Wakeup wakeup, List<CompletableFuture<Void>> toWake) {
    boolean targetFound = wakeup.targetOwner() == null;
    int slots = wakeup.slots();
    boolean sharedRound = false;
    for (Waiter waiter : channel.waiters) {
      if (waiter.local
          || (wakeup.targetOwner() != null && !wakeup.targetOwner().equals(waiter.owner))) {
        continue; // a local waiter has no place on the backend that a wake-up could be for
      }
      targetFound = true;
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
    return targetFound;
  }

  /**
   * The channel of a resource, or null; called with the monitor held. With no channel at all (the
   * uncontended case, on every grant and release) it allocates nothing.
   */
  private @Nullable Channel channel(ResourceType type, String name) {
    return channels.isEmpty() ? null : channels.get(new Key(type, name));
  }

  /** A channel as a waiter saw it before its first attempt. */
  static final class Sighting {
    private final Channel channel;
    private final long deliveries;

    private Sighting(Channel channel, long deliveries) {
      this.channel = channel;
      this.deliveries = deliveries;
    }
  }

  private record Key(ResourceType type, String name) {}

  private static final class Channel {
    final Key key;
    final LinkedHashSet<Waiter> waiters = new LinkedHashSet<>();
    CompletableFuture<WakeupBus.Subscription> subscription = new CompletableFuture<>();
    // Owner-aimed wake-ups that found no waiter of their owner, by delivery number.
    final Map<String, Long> missedByOwner = new HashMap<>();
    // The delivery number of the last wake-up open to any waiter.
    long lastOpenWakeup;
    // The grant of this client that holds the lock exclusively, as far as this channel saw.
    @Nullable Hold localHolder;

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
    private final Acquisition<?> acquisition;
    // Guarded by the WaitChannels monitor, like the channel's waiter set.
    private CompletableFuture<Void> signal = new CompletableFuture<>();
    private boolean wokenByRelease;
    private boolean caughtUp;
    // Waits behind a holder of this client without a place on the backend (until it next tries).
    private boolean local;

    private Waiter(
        Channel channel, @Nullable String owner, boolean shared, Acquisition<?> acquisition) {
      this.channel = channel;
      this.owner = owner;
      this.shared = shared;
      this.acquisition = acquisition;
    }

    /** Completes once the subscription is active. */
    CompletableFuture<Void> ready() {
      return channel.subscription.thenApply(subscription -> null);
    }
  }
}
