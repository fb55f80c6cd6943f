package io.latchkey.quorum;

import io.latchkey.Feature;
import io.latchkey.HolderInfo;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.UnsupportedFeatureException;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.FenceStore.Epoch;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.ResourceType;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One acquire attempt of the quorum (Redlock's steps, docs/adr/0009-quorum-fencing.md):
 *
 * <ol>
 *   <li>Send the attempt to every member at once, each followed on the same connection by a read of
 *       the member's epoch record. A member's grant <em>counts</em> if its epoch record exists and
 *       is not quarantined (a member that restarted without its data is empty or quarantined).
 *   <li>As soon as a majority counts, or can no longer, decide; except that while every member that
 *       answered counts, an exclusive attempt waits a little for the rest (as long as the majority
 *       took): with every member counting, no write-back round is needed (next step). A shared
 *       attempt that a majority counts waits for every member that is answering (below). Not
 *       granted: every member grant is undone, and the answer is "busy" with a random delay after a
 *       split vote.
 *   <li>Granted, as a re-entry (a majority re-entered the grant this client holds): the grant's
 *       token. A new grant: the token is a member value {@code epoch × 2^53 + member token} of the
 *       members that count, the one of rank {@code counted + majority − members} from the largest
 *       ({@link #tokenRank}: the majority-th largest when every member counts, the largest when
 *       only a bare majority does); every counting member below it is raised to it (its lock's
 *       fencing counter and its epoch) until a majority has it, before the grant is handed out.
 *       That is what makes the next grant's token larger, whoever makes it. When every member
 *       counts, a majority has it already: one round trip, however far apart the members' own
 *       tokens are (Redis members' follow their clocks).
 *   <li>The validity is the lease less the time taken less the drift allowance; a grant with none
 *       left is undone. The engine is told the lease less the drift: it counts from when it sent
 *       the attempt, so the time taken is in its count already.
 *   <li>A waiter is queued on every member or on none: when the attempt is granted, or was a split
 *       vote, it leaves the queue of each member that did not grant it (below).
 *   <li>A majority re-entering a grant of this owner that another client made (an owner token from
 *       another process; the members' holder records name the client) is undone and refused with
 *       {@link UnsupportedFeatureException}: that grant's token lives in the client that made it.
 * </ol>
 *
 * <p>Why a waiter leaves the queues of the members that did not grant it. Each member keeps its own
 * wait queue (the order in which attempts reached it) and, when a release frees the lock, keeps it
 * for its queue head for a hand-off ({@link io.latchkey.spi.LockRequest}). A member grant dequeues
 * the owner there; were it left queued on the others, a split vote would put it at the tail on some
 * members and leave it near the head on others, and a quorum grant would leave a stale place that
 * soon heads those queues. The members' queues would then disagree on their heads, each member
 * would keep the freed lock for another woken waiter, and no waiter could win a majority until
 * those hand-offs ran out: measured with 12 threads of 3 clients on five redis-servers, about one
 * grant a second, and the kit's stress tests timed out. Queued everywhere or nowhere, the members'
 * queues keep the same order, and their heads agree.
 *
 * <p>Answers that arrive after a round was decided are attached to the grant, or undone once. An
 * exclusive grant takes on every member grant it can (more members to confirm its renewals, and to
 * hold back other owners). Another client tells an exclusive holder's token from the lock's
 * counters, which late members do not shift, but a shared holder's from the holder records of the
 * members showing it ({@link QuorumInspection}): the token has rank {@code counted + majority −
 * members} among the counting members' records, and the view takes that rank among all records
 * showing the holder, shifted by one for each more. So a shared grant takes on a member grant that
 * did not count for it (it came late, or the member is in quarantine) only if the member's value is
 * at least the token: a record above it shifts the rank onto the token again, one below it onto a
 * smaller value. Others are undone. Keeping the ones above matters: a reader that holds on fewer
 * members lets a writer be granted on the others and lose a split vote, after which the writer
 * leaves the members' queues and no longer holds back new readers (ADR 0006; the kit's writer
 * preference checks failed so on mixed members when every non-counting grant was undone).
 *
 * <p>Why a shared attempt waits for every member that answers. A member grant below the token that
 * answers after the decision is undone, but until its undo arrives its record is there, and another
 * client's view ranks it with the others: on a token of rank 1 among three counting members of
 * five, one such record moves the view onto the next lower value. Members are independent, so a
 * member that applied the attempt before the one whose value became the token may answer after it
 * (Redis members' values follow their clocks: the kit's {@code sharedHoldersHoldTogether} on mixed
 * members saw a token 48 µs below the grant's). Deciding once every member answered leaves no
 * member grant to come late, so the view is the token from the moment the grant is handed out.
 * Exclusive grants need no wait: their view reads the lock's counters, which late member grants do
 * not shift ({@link QuorumInspection}). A member that left an attempt unanswered at the member
 * timeout (frozen, cut off) is not waited for again until it answers a call within that call's
 * bound ({@link QuorumMember#answering}): a frozen or always-late member would otherwise cost every
 * shared grant the member timeout. Its grants, once it answers again, are late ones as before.
 */
final class QuorumAcquisition {
  /**
   * The bits of a quorum token that hold a member's own token; the epoch is above them. 53 bits
   * hold Redis's tokens, which follow its clock in microseconds (ADR 0002), until the year 2255;
   * the 10 bits above them, 1023 epochs: as many losses of a member's data.
   */
  static final int MEMBER_TOKEN_BITS = 53;

  static final long MAX_EPOCH = (1L << (63 - MEMBER_TOKEN_BITS)) - 1;

  static final long MEMBER_TOKEN_MASK = (1L << MEMBER_TOKEN_BITS) - 1;

  /** A member's answer: its acquire answer and its epoch record, or null if that read failed. */
  record Vote(AcquireResult answer, @Nullable Epoch epoch) {
    boolean counts() {
      return answer.isGranted() && epoch != null && !epoch.isEmpty() && !epoch.isQuarantined();
    }

    /**
     * Whether another client's view of a shared grant with {@code token} stays that token when this
     * member's holder record joins the ones it ranks (its value is at least the token: class
     * comment).
     */
    boolean keepsTheRankOf(long token) {
      return epoch != null
          && answer.fencingToken() <= MEMBER_TOKEN_MASK
          && epoch.value() <= MAX_EPOCH
          && value() >= token;
    }

    /** The member's value of this grant: its epoch above its own token. */
    long value() {
      long memberToken = answer.fencingToken();
      if (epoch == null || memberToken > MEMBER_TOKEN_MASK || epoch.value() > MAX_EPOCH) {
        throw new IllegalStateException(
            "a member's fencing token "
                + memberToken
                + " or epoch "
                + (epoch == null ? "(unknown)" : epoch.value())
                + " is past the quorum's bounds (2^53, 1023): docs/adr/0009-quorum-fencing.md");
      }
      return (epoch.value() << MEMBER_TOKEN_BITS) | memberToken;
    }
  }

  private final QuorumBackend quorum;
  private final LockRequest request;
  private final HolderRef holder;
  private final long startedNanos = System.nanoTime();
  private final List<LateVote> lateVotes = new ArrayList<>();
  private boolean resolved;
  private @Nullable QuorumGrant grant;
  // The members whose grants counted for #grant as a new grant (#handOut).
  private Set<Integer> counting = Set.of();
  // Ends the wait for the members still out once a majority counts (#decided).
  private @Nullable ScheduledFuture<?> grace;

  private record LateVote(QuorumMember member, Vote vote) {}

  QuorumAcquisition(QuorumBackend quorum, LockRequest request) {
    this.quorum = quorum;
    this.request = request;
    this.holder = new HolderRef(ResourceType.LOCK, request.name(), request.owner());
  }

  CompletionStage<AcquireResult> start() {
    return MemberRound.startInOrder(
            quorum.sendingOrder(request.name()),
            quorum.members(),
            this::vote,
            quorum.memberTimeoutMillis(),
            quorum.scheduler(),
            this::decided,
            this::lateVote)
        .thenCompose(this::decide)
        .whenComplete((result, failure) -> resolve(result));
  }

  private CompletionStage<Vote> vote(QuorumMember member) {
    CompletionStage<AcquireResult> acquire = member.call(b -> b.locks().tryAcquire(request));
    // Sent right after the attempt, on the same connection: it reads the epoch as it was after it.
    CompletionStage<Epoch> epoch = member.fences(fences -> fences.epoch(0, 0));
    return acquire.thenCompose(
        answer ->
            epoch.handle(
                (read, failure) -> {
                  if (read != null) {
                    member.observe(read);
                    if (read.isEmpty()) {
                      // Seeded now, whether or not this vote is counted: a member that answers
                      // after the decisions would otherwise stay empty for this client. In the
                      // background: the seeded member counts from a later attempt on.
                      CompletableFuture<Void> unused = quorum.seedEmptyMembers();
                    }
                  }
                  return new Vote(answer, failure == null ? read : null);
                }));
  }

  /**
   * Whether the answers so far decide the attempt (called under the round's lock): refused as soon
   * as a majority can no longer count. A shared attempt is granted once a majority counts and no
   * member that is {@linkplain QuorumMember#answering answering} is still out (class comment). An
   * exclusive one as soon as a majority counts, unless every member answered so far counts, some
   * are still out and the token these answers give would need a write-back ({@link #tokenRank}):
   * then the round waits for the rest a little longer, as long as the majority took (a second round
   * trip would cost about as much).
   */
  private boolean decided(MemberRound<Vote> round) {
    int counted = 0;
    int answered = 0;
    for (int i = 0; i < round.size(); i++) {
      Vote vote = round.answer(i);
      if (vote != null) {
        answered++;
        if (vote.counts()) {
          counted++;
        }
      }
    }
    int pending = round.pendingCount();
    if (counted + pending < quorum.majority()) {
      return true;
    }
    if (counted < quorum.majority()) {
      return false;
    }
    if (request.mode() == LockMode.SHARED) {
      return !waitsForAnAnsweringMember(round);
    }
    if (pending == 0 || counted < answered || failedCount(round) > 0 || !needsWriteBack(round)) {
      return true;
    }
    synchronized (this) {
      if (grace == null) {
        long waited = System.nanoTime() - startedNanos;
        grace = quorum.scheduler().schedule(round::completeNow, waited, TimeUnit.NANOSECONDS);
      }
    }
    return false;
  }

  private static boolean waitsForAnAnsweringMember(MemberRound<Vote> round) {
    for (int i = 0; i < round.size(); i++) {
      if (round.pending(i) && round.member(i).answering()) {
        return true;
      }
    }
    return false;
  }

  private static int failedCount(MemberRound<Vote> round) {
    int failed = 0;
    for (int i = 0; i < round.size(); i++) {
      if (round.failure(i) != null) {
        failed++;
      }
    }
    return failed;
  }

  /** Whether the counting answers so far give a token that fewer than a majority already hold. */
  private boolean needsWriteBack(MemberRound<Vote> round) {
    List<Integer> counted = new ArrayList<>();
    for (int i = 0; i < round.size(); i++) {
      Vote vote = round.answer(i);
      if (vote != null && vote.counts()) {
        counted.add(i);
      }
    }
    long token = token(round, counted);
    int atToken = 0;
    for (int i : counted) {
      if (vote(round, i).value() >= token) {
        atToken++;
      }
    }
    return atToken < quorum.majority();
  }

  /**
   * The rank, among the counting members' values sorted from the largest, of the value that is the
   * new grant's token: {@code counted + majority − members}. Every earlier grant's token T was held
   * (value ≥ T) by a majority W when it was handed out, and values only grow; at least {@code
   * counted + majority − members} of the counting members are in W, and each counted up past its
   * value, so that many values are above T. The value of that rank is therefore larger than every
   * earlier token. When every member counts, the rank is the majority's: a majority holds the token
   * already and nothing is written back. With fewer, it is lower, and the write-back raises members
   * to it until a majority holds it (docs/adr/0009-quorum-fencing.md).
   */
  private int tokenRank(int counted) {
    return Math.max(1, counted + quorum.majority() - quorum.members().size());
  }

  /** The token the counting members' values give: the value of rank {@link #tokenRank}. */
  private long token(MemberRound<Vote> round, List<Integer> counted) {
    List<Long> values = new ArrayList<>();
    for (int i : counted) {
      values.add(vote(round, i).value());
    }
    values.sort(Collections.reverseOrder());
    return values.get(tokenRank(values.size()) - 1);
  }

  private CompletionStage<AcquireResult> decide(MemberRound<Vote> round) {
    synchronized (this) {
      if (grace != null) {
        grace.cancel(false);
      }
    }
    List<Integer> counted = new ArrayList<>();
    int answered = 0;
    int upgradeRefused = 0;
    int granted = 0;
    List<Long> busyRetries = new ArrayList<>();
    for (int i = 0; i < round.size(); i++) {
      Vote vote = round.answer(i);
      if (vote == null) {
        continue;
      }
      answered++;
      switch (vote.answer().status()) {
        case GRANTED -> {
          granted++;
          if (vote.counts()) {
            counted.add(i);
          }
        }
        case BUSY -> busyRetries.add(vote.answer().retryAfterMillis());
        case UPGRADE_REFUSED -> upgradeRefused++;
      }
    }
    if (counted.size() >= quorum.majority()) {
      return granted(round, counted);
    }
    CompletableFuture<Void> unused = undoAll(round);
    if (answered + round.pendingCount() < quorum.majority()) {
      return CompletableFuture.failedFuture(
          quorum.unavailable(
              answered, "acquire lock '" + request.name() + "'", round.anyFailure()));
    }
    if (upgradeRefused > 0) {
      return CompletableFuture.completedFuture(AcquireResult.upgradeRefused());
    }
    if (granted > 0) {
      leaveQueueWhereRefused(round);
      // A split vote (or members in quarantine): try again after a random delay, so that
      // competing clients do not split the members again.
      return CompletableFuture.completedFuture(AcquireResult.busy(quorum.randomRetryDelay()));
    }
    return CompletableFuture.completedFuture(AcquireResult.busy(retryAfter(busyRetries)));
  }

  /** When a majority may be free: the majority-th earliest end of the members' obstacles. */
  private long retryAfter(List<Long> busyRetries) {
    List<Long> known = new ArrayList<>();
    for (long retry : busyRetries) {
      if (retry >= 0) {
        known.add(retry);
      }
    }
    if (known.isEmpty()) {
      return -1;
    }
    Collections.sort(known);
    return known.get(Math.min(quorum.majority(), known.size()) - 1);
  }

  private CompletionStage<AcquireResult> granted(MemberRound<Vote> round, List<Integer> counted) {
    QuorumGrant held = quorum.grants().get(holder);
    if (held != null && !held.ended() && isReentry(round, counted, held)) {
      return handOut(round, held, 1, Set.of());
    }
    if ((held == null || held.ended()) && reenteredByMajority(round, counted)) {
      // A grant of this owner that this client does not hold: another client's (an owner token
      // that travelled), or this client's own that it is still undoing or gave up on. Whose it is
      // the members' holder records say; the rare case costs a round trip.
      return quorum
          .inspect(request.name())
          // Members that cannot say leave it as it was before: a new grant.
          .exceptionally(failure -> Optional.empty())
          .thenCompose(
              info -> {
                if (madeByAnotherClient(info.orElse(null))) {
                  // Its quorum token lives in that client, and the members' own tokens do not give
                  // it back (they are not in step): no token this client could name is the grant's.
                  // Refused once the holds it added are taken off again, so that the caller never
                  // sees them (slower members, such as ZooKeeper's, take a few round trips).
                  return undoAll(round)
                      .thenCompose(
                          undone ->
                              CompletableFuture.<AcquireResult>failedFuture(
                                  new UnsupportedFeatureException(
                                      Feature.REMOTE_OWNER_TOKENS,
                                      quorum.description()
                                          + " (an owner token re-enters only grants its own client made:"
                                          + " docs/backends/quorum.md)")));
                }
                return newGrant(round, counted);
              });
    }
    return newGrant(round, counted);
  }

  private boolean madeByAnotherClient(@Nullable LockInfo info) {
    if (info == null) {
      return false;
    }
    for (HolderInfo holder : info.holders()) {
      if (holder.owner().equals(request.owner()) && holder.mode() == request.mode()) {
        return !holder.clientId().equals(quorum.clientId());
      }
    }
    return false;
  }

  /**
   * A new grant: only members that made a new grant of their own count for it. A member that
   * answers with a re-entry (more than one hold) still holds an earlier grant of this owner (its
   * release has not reached it yet, or another client's hold of the owner token is there): its
   * value was not counted up for this grant, so it is no sign that the token grows, and counting it
   * could hand out the earlier grant's token again (ADR 0009's proof needs every counting member of
   * the intersection to count up). It is attached to the grant as any other late or non-counting
   * member is, and undone with it.
   */
  private CompletionStage<AcquireResult> newGrant(
      MemberRound<Vote> round, List<Integer> grantedNow) {
    List<Integer> counted = new ArrayList<>();
    for (int i : grantedNow) {
      if (vote(round, i).answer().holds() == 1) {
        counted.add(i);
      }
    }
    if (counted.size() < quorum.majority()) {
      CompletableFuture<Void> unused = undoAll(round);
      return CompletableFuture.completedFuture(AcquireResult.busy(quorum.randomRetryDelay()));
    }
    long quorumToken = token(round, counted);
    return quorum
        .writeBack(request.name(), quorumToken, round, counted)
        .thenCompose(
            written -> {
              if (!written) {
                CompletableFuture<Void> unused = undoAll(round);
                return CompletableFuture.completedFuture(
                    AcquireResult.busy(quorum.randomRetryDelay()));
              }
              QuorumGrant registered = quorum.register(holder, quorumToken);
              // Another thread of the same owner may have registered this grant a moment ago.
              int holds = registered.hasHolds() ? 1 : majorityHolds(round, counted);
              return handOut(round, registered, holds, memberIndices(round, counted));
            });
  }

  private boolean isReentry(MemberRound<Vote> round, List<Integer> counted, QuorumGrant held) {
    int same = 0;
    for (int i : counted) {
      var memberGrant = held.memberGrant(round.member(i).index());
      if (memberGrant != null
          && memberGrant.fencingToken() == vote(round, i).answer().fencingToken()) {
        same++;
      }
    }
    return same >= quorum.majority();
  }

  /** Whether a majority of the counting members re-entered a grant this owner already held. */
  private boolean reenteredByMajority(MemberRound<Vote> round, List<Integer> counted) {
    int reentered = 0;
    for (int i : counted) {
      if (vote(round, i).answer().holds() > 1) {
        reentered++;
      }
    }
    return reentered >= quorum.majority();
  }

  /** The holds a majority of the counting members report at least. */
  private int majorityHolds(MemberRound<Vote> round, List<Integer> counted) {
    List<Integer> holds = new ArrayList<>();
    for (int i : counted) {
      holds.add(vote(round, i).answer().holds());
    }
    holds.sort(Collections.reverseOrder());
    return Math.max(1, holds.get(quorum.majority() - 1));
  }

  private static Set<Integer> memberIndices(MemberRound<Vote> round, List<Integer> slots) {
    Set<Integer> indices = new HashSet<>();
    for (int slot : slots) {
      indices.add(round.member(slot).index());
    }
    return indices;
  }

  /**
   * Hands out {@code holds} more of {@code target} and attaches the member grants to it.
   *
   * @param joining the members whose grants counted for {@code target} as a new grant (empty for a
   *     re-entry), which a shared grant takes on whatever their values (class comment)
   */
  private CompletionStage<AcquireResult> handOut(
      MemberRound<Vote> round, QuorumGrant target, int holds, Set<Integer> joining) {
    // Redlock's validity, left from now: lease - time taken - drift. None left: undone.
    long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos);
    long fromSend = request.leaseMillis() - quorum.settings().driftMillis(request.leaseMillis());
    if (fromSend - elapsedMillis <= 0) {
      CompletableFuture<Void> unused = undoAll(round);
      quorum.forgetIfUnused(target);
      return CompletableFuture.completedFuture(AcquireResult.busy(quorum.randomRetryDelay()));
    }
    synchronized (this) {
      grant = target;
      counting = joining;
    }
    for (int i = 0; i < round.size(); i++) {
      Vote vote = round.answer(i);
      if (vote != null && vote.answer().isGranted()) {
        attachOrUndo(round.member(i), vote);
      }
    }
    leaveQueueWhereRefused(round);
    int total = target.addHolds(request.mode(), holds);
    // The engine counts a validity from when it sent the attempt, which is before every member's
    // lease began, and so includes the time taken already: passing "lease - time taken - drift"
    // would count that time twice and end the lease early by it (by hundreds of milliseconds when
    // a loaded client or a slow member made the attempt slow). The engine still takes its own drift
    // allowance off this.
    return CompletableFuture.completedFuture(
        AcquireResult.grantedFor(target.token(), total, fromSend));
  }

  private void leaveQueueWhereRefused(MemberRound<Vote> round) {
    if (request.queueKeepAliveMillis() == 0) {
      return;
    }
    synchronized (quorum.sendingOrder(request.name())) {
      for (int i = 0; i < round.size(); i++) {
        Vote vote = round.answer(i);
        if (vote == null || !vote.answer().isGranted()) {
          QuorumMember member = round.member(i);
          CompletionStage<Void> unused =
              member.call(b -> b.locks().leaveQueue(request.name(), request.owner()));
        }
      }
    }
  }

  private static Vote vote(MemberRound<Vote> round, int slot) {
    Vote vote = round.answer(slot);
    if (vote == null) {
      throw new IllegalStateException("no vote from " + round.member(slot));
    }
    return vote;
  }

  /**
   * Undoes every member's grant of the round.
   *
   * @return completes when every undo was answered or failed
   */
  private CompletableFuture<Void> undoAll(MemberRound<Vote> round) {
    List<CompletableFuture<?>> undos = new ArrayList<>();
    for (int i = 0; i < round.size(); i++) {
      Vote vote = round.answer(i);
      if (vote != null && vote.answer().isGranted()) {
        undos.add(
            quorum
                .undo(round.member(i), holder, vote.answer().fencingToken(), request.mode())
                .handle((answer, failure) -> null)
                .toCompletableFuture());
      }
    }
    return CompletableFuture.allOf(undos.toArray(CompletableFuture[]::new));
  }

  private void lateVote(QuorumMember member, Vote vote) {
    if (!vote.answer().isGranted()) {
      return;
    }
    synchronized (this) {
      if (!resolved) {
        lateVotes.add(new LateVote(member, vote));
        return;
      }
    }
    attachOrUndo(member, vote);
  }

  private void attachOrUndo(QuorumMember member, Vote vote) {
    QuorumGrant target;
    boolean counted;
    synchronized (this) {
      target = grant;
      counted = counting.contains(member.index());
    }
    long memberToken = vote.answer().fencingToken();
    boolean mayJoin =
        request.mode() == LockMode.EXCLUSIVE
            || counted
            || (target != null && vote.keepsTheRankOf(target.token()));
    if (target == null || !target.attach(member.index(), memberToken, mayJoin)) {
      CompletionStage<?> unused = quorum.undo(member, holder, memberToken, request.mode());
    }
  }

  /** The attempt's outcome is known: late votes wait no more. */
  private void resolve(@Nullable AcquireResult result) {
    List<LateVote> waiting;
    synchronized (this) {
      resolved = true;
      if (result == null || !result.isGranted()) {
        grant = null;
      }
      waiting = List.copyOf(lateVotes);
      lateVotes.clear();
    }
    waiting.forEach(late -> attachOrUndo(late.member(), late.vote()));
  }
}
