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
 * and dropped. A lost or late copy costs nothing: the first one woke the waiter, and the engine
 * re-checks by its own bounds anyway.
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
}
