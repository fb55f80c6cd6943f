package io.latchkey.quorum;

import io.latchkey.HolderInfo;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.ResourceType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Merges what the members say about one lock into what the quorum holds: an owner holds the lock if
 * it holds it on a majority of the members; its holds and remaining lease are what a majority has
 * at least; its fencing token is the quorum's token if this client made the grant, else the value a
 * majority of the members' records have at least (epoch above member token, as {@link
 * QuorumAcquisition} computes it, which is the quorum's token while the members are in step).
 */
final class QuorumInspection {
  private QuorumInspection() {}

  static Optional<LockInfo> merge(
      String name,
      List<LockInfo> infos,
      List<QuorumMember> seenAt,
      int majority,
      Map<HolderRef, QuorumGrant> grants) {
    Map<OwnerMode, List<HolderInfo>> byOwner = new LinkedHashMap<>();
    Map<OwnerMode, List<QuorumMember>> ownerAt = new LinkedHashMap<>();
    int queued = 0;
    for (int i = 0; i < infos.size(); i++) {
      LockInfo info = infos.get(i);
      queued = Math.max(queued, info.queuedWaiters());
      for (HolderInfo holder : info.holders()) {
        OwnerMode key = new OwnerMode(holder.owner(), holder.mode());
        byOwner.computeIfAbsent(key, o -> new ArrayList<>()).add(holder);
        ownerAt.computeIfAbsent(key, o -> new ArrayList<>()).add(seenAt.get(i));
      }
    }
    List<HolderInfo> holders = new ArrayList<>();
    byOwner.forEach(
        (key, seen) -> {
          if (seen.size() < majority) {
            return;
          }
          List<QuorumMember> at = ownerAt.getOrDefault(key, List.of());
          List<Long> values = new ArrayList<>();
          for (int i = 0; i < seen.size(); i++) {
            long epoch = Math.max(0, at.get(i).epoch());
            values.add((epoch << QuorumAcquisition.MEMBER_TOKEN_BITS) | seen.get(i).fencingToken());
          }
          QuorumGrant ours = grants.get(new HolderRef(ResourceType.LOCK, name, key.owner()));
          long token =
              ours != null && !ours.ended() ? ours.token() : atLeastByMajority(values, majority);
          HolderInfo first = seen.get(0);
          holders.add(
              new HolderInfo(
                  key.owner(),
                  first.clientId(),
                  key.mode(),
                  atLeastByMajority(seen.stream().map(h -> (long) h.holds()).toList(), majority)
                      .intValue(),
                  Duration.ofMillis(
                      atLeastByMajority(
                          seen.stream().map(h -> h.remainingLease().toMillis()).toList(),
                          majority)),
                  token));
        });
    if (holders.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new LockInfo(name, holders, queued));
  }

  /** One owner's holds in one mode: the members list each mode of an owner on its own. */
  private record OwnerMode(String owner, LockMode mode) {}

  /** The largest value that at least {@code majority} of {@code values} reach. */
  private static Long atLeastByMajority(List<Long> values, int majority) {
    List<Long> sorted = new ArrayList<>(values);
    sorted.sort(Comparator.reverseOrder());
    return sorted.get(Math.min(majority, sorted.size()) - 1);
  }
}
