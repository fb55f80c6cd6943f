package io.latchkey.quorum;

import io.latchkey.LockMode;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * One grant of the quorum as this client knows it: the quorum's fencing token, and the grant each
 * member made for it (members give their own tokens; renewal and release name each member's grant
 * by the member's token). The holds are this client's mirror of the grant's hold counts. A grant is
 * ended once its last hold is released; a member grant that arrives after that is undone.
 */
final class QuorumGrant {
  private final HolderRef holder;
  private final long token;
  private final Map<Integer, Long> memberTokens = new HashMap<>();
  private int exclusiveHolds;
  private int sharedHolds;
  private boolean ended;

  QuorumGrant(HolderRef holder, long token) {
    this.holder = holder;
    this.token = token;
  }

  HolderRef holder() {
    return holder;
  }

  long token() {
    return token;
  }

  /**
   * Adds a member's grant to this one.
   *
   * @param member the member's index
   * @param memberToken the member's token of its grant
   * @param mayJoin whether the member may join this grant: if not, only a member that holds it
   *     under the same token already (a re-entry there) is attached
   * @return false if this grant has ended, or the member may not join it: the caller must undo the
   *     member's grant
   */
  synchronized boolean attach(int member, long memberToken, boolean mayJoin) {
    if (ended) {
      return false;
    }
    Long attached = memberTokens.get(member);
    if (!mayJoin && (attached == null || attached != memberToken)) {
      return false;
    }
    memberTokens.put(member, memberToken);
    return true;
  }

  /**
   * @return the member's grant of this one, or null if that member did not grant it
   */
  synchronized @Nullable GrantRef memberGrant(int member) {
    Long memberToken = memberTokens.get(member);
    return memberToken == null ? null : new GrantRef(holder, memberToken);
  }

  synchronized Map<Integer, Long> memberTokens() {
    return Map.copyOf(memberTokens);
  }

  /**
   * @return the holds in {@code mode} after adding {@code holds}
   */
  synchronized int addHolds(LockMode mode, int holds) {
    if (mode == LockMode.SHARED) {
      sharedHolds += holds;
      return sharedHolds;
    }
    exclusiveHolds += holds;
    return exclusiveHolds;
  }

  /** What {@link #release} left: the holds in its mode, and the member grants to release. */
  record Released(int holdsLeft, Map<Integer, Long> memberTokens) {}

  /**
   * Removes one hold in {@code mode} and reads the member grants, in one step with {@link #attach}:
   * a member grant attached after this read of the last hold cannot be, so none is left out of the
   * release.
   *
   * @return the holds left in {@code mode}, and the member grants to release the hold on
   */
  synchronized Released release(LockMode mode) {
    int left = releaseHold(mode);
    // In member order, as every round is sent.
    return new Released(left, Collections.unmodifiableMap(new TreeMap<>(memberTokens)));
  }

  /**
   * Removes one hold in {@code mode}; the grant ends when no hold is left.
   *
   * @return the holds left in {@code mode}
   */
  private int releaseHold(LockMode mode) {
    if (mode == LockMode.SHARED) {
      sharedHolds = Math.max(0, sharedHolds - 1);
    } else {
      exclusiveHolds = Math.max(0, exclusiveHolds - 1);
    }
    if (sharedHolds == 0 && exclusiveHolds == 0) {
      ended = true;
    }
    return mode == LockMode.SHARED ? sharedHolds : exclusiveHolds;
  }

  synchronized boolean hasHolds() {
    return sharedHolds > 0 || exclusiveHolds > 0;
  }

  synchronized boolean ended() {
    return ended;
  }

  /**
   * Ends the grant if it never had a hold (its first attempt was undone).
   *
   * @return true if it ended now or had ended
   */
  synchronized boolean endIfUnused() {
    if (!hasHolds()) {
      ended = true;
    }
    return ended;
  }
}
