package io.latchkey.internal;

import io.latchkey.LockMode;
import io.latchkey.spi.HolderRef;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.jspecify.annotations.Nullable;

/**
 * The holds of one client, by holder. Transitions (a grant creating a hold, the last release
 * removing it) happen inside the map's atomic compute so that a grant racing with the last release
 * of the same holder never lands on a hold that is being removed.
 */
final class HoldRegistry {
  private final ConcurrentMap<HolderRef, Hold> holds = new ConcurrentHashMap<>();

  Hold granted(
      HolderRef ref,
      LockMode mode,
      int holdsInMode,
      long token,
      boolean renewed,
      long sentAt,
      long lease) {
    return holds.compute(
        ref,
        (key, current) -> {
          Hold hold = current == null || current.lost() != null ? new Hold(key) : current;
          hold.granted(mode, holdsInMode, token, renewed, sentAt, lease);
          return hold;
        });
  }

  void released(Hold hold, LockMode mode, int remaining) {
    holds.computeIfPresent(
        hold.ref,
        (key, current) -> {
          if (current != hold) {
            return current;
          }
          return hold.released(mode, remaining) == 0 ? null : hold;
        });
  }

  void dropOne(Hold hold, LockMode mode) {
    holds.computeIfPresent(
        hold.ref,
        (key, current) -> {
          if (current != hold) {
            return current;
          }
          return hold.dropOne(mode) == 0 ? null : hold;
        });
  }

  void remove(Hold hold) {
    holds.remove(hold.ref, hold);
  }

  @Nullable Hold find(HolderRef ref) {
    return holds.get(ref);
  }

  /** The holds the watchdog must renew: held, not lost, taken without an explicit lease. */
  List<Hold> renewable() {
    List<Hold> result = new ArrayList<>();
    for (Hold hold : holds.values()) {
      if (hold.lost() == null && hold.renewedByWatchdog() && hold.totalHolds() > 0) {
        result.add(hold);
      }
    }
    return result;
  }

  List<Hold> all() {
    return new ArrayList<>(holds.values());
  }
}
