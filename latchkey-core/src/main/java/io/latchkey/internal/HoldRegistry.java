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

  /**
   * Records a grant. A grant whose token differs from the registered hold's means the backend
   * forgot that hold (it expired before this client noticed) and this is a new one: the old hold is
   * returned as {@code superseded} so the caller can report its loss.
   */
  Granted granted(
      HolderRef ref, LockMode mode, long token, boolean renewed, long sentAt, long lease) {
    Hold[] superseded = new Hold[1];
    Hold hold =
        holds.compute(
            ref,
            (key, current) -> {
              Hold target = current;
              if (current == null || current.lost() != null) {
                target = new Hold(key);
              } else if (current.fencingToken() != token) {
                superseded[0] = current;
                target = new Hold(key);
              }
              target.granted(mode, token, renewed, sentAt, lease);
              return target;
            });
    return new Granted(hold, superseded[0]);
  }

  /** A grant's hold, and the hold it replaced if the backend had forgotten that one. */
  record Granted(Hold hold, @Nullable Hold superseded) {}

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
