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
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Merges what the members say about one lock into what the quorum holds: an owner holds the lock if
 * it holds it on a majority of the members; its holds and remaining lease are what a majority has
 * at least. Its fencing token is the quorum's token if this client made the grant. Another client's
 * grant's token is recovered from the members (epoch above member value, as {@link
 * QuorumAcquisition} computes it):
 *
 * <ul>
 *   <li>An exclusive holder: the value that a majority of the members showing it reach, of their
 *       lock's <em>fencing counter</em>. The grant's token T is the largest value of the majority C
 *       that counted, and before the grant was handed out every member of C below T was raised to T
 *       (ADR 0009); while the exclusive grant stands there, no other grant moves those counters. So
 *       a majority of the members showing the holder have exactly T, and the others (at most N −
 *       majority, fewer than a majority: members whose grant came after the decision) may have more
 *       or less: the majority-th largest value is T. The holders' own member tokens do not give T:
 *       a member of C below T keeps its own token in its record, so the majority-th largest of
 *       those is T only when C were the members with the smallest tokens (usual on Redis, whose
 *       tokens follow each server's clock, but not certain: the kit's exact-token checks failed now
 *       and then under load).
 *   <li>A shared holder: other readers' grants move the counters, so the members' holder records
 *       tell it. The token T has rank {@code k + majority − members} from the largest among the
 *       records of the k members that counted for the grant; a shared grant takes on a member grant
 *       that did not count only if its value is at least T, and undoes the others ({@link
 *       QuorumAcquisition}). So of the s records showing the holder, the value of rank {@code s +
 *       majority − members} is T: each record added above T moves the rank down by one onto T
 *       again. Exact while every member that counted answers and still holds the grant, and no undo
 *       of a member grant below T is still on its way; before, late members' lower records shifted
 *       the rank (docs/adr/0009-quorum-fencing.md).
 *   <li>An owner that holds both modes (a writer reading): its read holds carry its write grant's
 *       token, on every backend.
 * </ul>
 */
final class QuorumInspection {
  private QuorumInspection() {}

  static Optional<LockInfo> merge(
      String name,
      List<LockInfo> infos,
      List<QuorumMember> seenAt,
      @Nullable List<Long> fenceCounters,
      int members,
      Map<HolderRef, QuorumGrant> grants) {
    int majority = members / 2 + 1;
    Map<OwnerMode, List<HolderInfo>> byOwner = new LinkedHashMap<>();
    Map<OwnerMode, List<QuorumMember>> ownerAt = new LinkedHashMap<>();
    Map<OwnerMode, List<Long>> countersAt = new LinkedHashMap<>();
    int queued = 0;
    for (int i = 0; i < infos.size(); i++) {
      LockInfo info = infos.get(i);
      queued = Math.max(queued, info.queuedWaiters());
      for (HolderInfo holder : info.holders()) {
        OwnerMode key = new OwnerMode(holder.owner(), holder.mode());
        byOwner.computeIfAbsent(key, o -> new ArrayList<>()).add(holder);
        ownerAt.computeIfAbsent(key, o -> new ArrayList<>()).add(seenAt.get(i));
        // A counter is never below the tokens it gave; a member that could not read it gives the
        // holder's token.
        long counter = fenceCounters == null ? holder.fencingToken() : fenceCounters.get(i);
        countersAt
            .computeIfAbsent(key, o -> new ArrayList<>())
            .add(
                holder.mode() == LockMode.EXCLUSIVE
                    ? Math.max(counter, holder.fencingToken())
                    : holder.fencingToken());
      }
    }
    Map<OwnerMode, Long> tokens = new LinkedHashMap<>();
    byOwner.forEach(
        (key, seen) -> {
          if (seen.size() < majority) {
            return;
          }
          List<QuorumMember> at = ownerAt.getOrDefault(key, List.of());
          List<Long> memberValues = countersAt.getOrDefault(key, List.of());
          List<Long> values = new ArrayList<>();
          for (int i = 0; i < seen.size(); i++) {
            long epoch = Math.max(0, at.get(i).epoch());
            values.add((epoch << QuorumAcquisition.MEMBER_TOKEN_BITS) | memberValues.get(i));
          }
          // Exclusive: the majority-th largest counter. Shared: the holder's own values, of the
          // rank its grant's token had among them (class comment).
          int rank =
              key.mode() == LockMode.EXCLUSIVE
                  ? majority
                  : Math.max(1, values.size() + majority - members);
          tokens.put(key, valueOfRank(values, rank));
        });
    List<HolderInfo> holders = new ArrayList<>();
    byOwner.forEach(
        (key, seen) -> {
          if (seen.size() < majority) {
            return;
          }
          QuorumGrant ours = grants.get(new HolderRef(ResourceType.LOCK, name, key.owner()));
          // A writer's read holds share its write grant's token.
          Long writeToken = tokens.get(new OwnerMode(key.owner(), LockMode.EXCLUSIVE));
          long token =
              ours != null && !ours.ended()
                  ? ours.token()
                  : writeToken != null ? writeToken : Objects.requireNonNull(tokens.get(key));
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
    return valueOfRank(values, majority);
  }

  /** The value of {@code rank} (1: the largest) among {@code values}, at most the smallest. */
  private static Long valueOfRank(List<Long> values, int rank) {
    List<Long> sorted = new ArrayList<>(values);
    sorted.sort(Comparator.reverseOrder());
    return sorted.get(Math.min(rank, sorted.size()) - 1);
  }
}
