package io.latchkey.quorum;

import io.latchkey.spi.Wakeup;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The wake-ups of one resource from all members, as one channel: a release reaches every member
 * that held the grant, and each publishes the same wake-up; the waiter should hear it once. The
 * first copy is delivered; up to N − 1 equal copies within a short window after it are echoes of it
 * and dropped, <em>unless the woken owner made an attempt through this client since</em> ({@link
 * #attempted}).
 *
 * <p>Why an attempt ends the echoes. A member that wakes an owner keeps a freed lock for it until
 * that owner's next attempt reaches it there, or the hand-off runs out (1 s by default). Under
 * contention one owner is woken by different members for different reasons (a release here, an
 * undone split-vote grant there) within the echo window; were every copy after the first dropped, a
 * copy whose member woke the owner <em>after</em> the owner's attempt had passed that member would
 * never reach it, and that member would keep the lock for a waiter that sleeps: no other waiter can
 * win a majority until the hand-off runs out. Measured on five in-memory members, eight threads of
 * one client: 11 grants a second with the window alone; with every copy delivered, tens of
 * thousands (docs/benchmarks.md). A copy that arrives after an attempt of its owner may be a true
 * echo (its member was passed after waking): it costs one extra attempt, never a stall.
 */
final class MergedWakeups implements Consumer<Wakeup> {
  /** Far above the spread of one release's copies (one publish per member, sent at once). */
  static final long ECHO_WINDOW_MILLIS = 100;

  private final Consumer<Wakeup> listener;
  private final int members;
  private final Map<Wakeup, Echoes> recent = new HashMap<>();

  private record Echoes(long deliveredAtNanos, int left) {}

  MergedWakeups(Consumer<Wakeup> listener, int members) {
    this.listener = listener;
    this.members = members;
  }

  @Override
  public void accept(Wakeup wakeup) {
    boolean deliver;
    synchronized (this) {
      long now = System.nanoTime();
      long window = TimeUnit.MILLISECONDS.toNanos(ECHO_WINDOW_MILLIS);
      recent.values().removeIf(echoes -> now - echoes.deliveredAtNanos() > window);
      Echoes echoes = recent.get(wakeup);
      if (echoes == null || echoes.left() == 0) {
        deliver = true;
        recent.put(wakeup, new Echoes(now, members - 1));
      } else {
        deliver = false;
        recent.put(wakeup, new Echoes(echoes.deliveredAtNanos(), echoes.left() - 1));
      }
    }
    if (deliver) {
      listener.accept(wakeup);
    }
  }

  /**
   * The owner is about to send an attempt to the members: the next copy of a wake-up aimed at it is
   * news again (its member may have woken it after this attempt passed there).
   *
   * @param owner the owner whose attempt is being sent
   */
  synchronized void attempted(String owner) {
    recent.remove(Wakeup.forOwner(owner));
  }
}
