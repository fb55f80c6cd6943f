package io.latchkey.quorum;

import io.latchkey.BackendUnavailableException;
import io.latchkey.ClientInfo;
import io.latchkey.Feature;
import io.latchkey.LockInfo;
import io.latchkey.LockMode;
import io.latchkey.spi.AcquireResult;
import io.latchkey.spi.AdminStore;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.BackendFactory;
import io.latchkey.spi.FenceStore.Epoch;
import io.latchkey.spi.GrantEvents;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LatchStore;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.LeasedSemaphoreStore;
import io.latchkey.spi.LockRequest;
import io.latchkey.spi.LockStore;
import io.latchkey.spi.ReleaseResult;
import io.latchkey.spi.RenewResult;
import io.latchkey.spi.ResourceType;
import io.latchkey.spi.SemaphoreStore;
import io.latchkey.spi.Wakeup;
import io.latchkey.spi.WakeupBus;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * A lock service made of N independent members: Redlock generalised to members of any kind.
 *
 * <p>How it works (docs/backends/quorum.md, docs/adr/0009-quorum-fencing.md):
 *
 * <ul>
 *   <li><b>Acquire</b> ({@link QuorumAcquisition}): the attempt goes to every member at once; it is
 *       granted when a majority of members that count granted it within its validity (lease − time
 *       taken − drift), which the engine gets as {@link AcquireResult#validForMillis()}. Otherwise
 *       every member grant is undone, including those whose answer comes late.
 *   <li><b>Fencing</b>: each member keeps its own lock counter; the quorum's token is a value
 *       {@code epoch × 2^53 + member token} of the counting members (the one of rank {@code counted
 *       + majority − members} from the largest), held by a majority before it is handed out
 *       (written back where needed), so the next grant's majority, which shares a member with this
 *       one, starts above it. The epoch (a record per member without expiry) grows past every
 *       earlier one when a member comes back empty, so an empty restart cannot roll a token back.
 *   <li><b>The restart rule</b>: a member whose epoch record is gone restarted without its data; it
 *       gets a new epoch and a quarantine marker of {@code maxLease} by its own clock, and counts
 *       for nothing until the marker expires.
 *   <li><b>Renewal and release</b> go to every member that granted, each by its own token; a lease
 *       holds while a majority confirms it.
 *   <li><b>Grants live in this client</b>: the quorum's token and the member tokens behind it are
 *       known only here, so an owner token re-enters only grants this client made ({@link
 *       Feature#REMOTE_OWNER_TOKENS} is missing).
 * </ul>
 *
 * Fair locks, semaphores, leased semaphores and latches are not offered: a majority of independent
 * counters or queues does not make one honest counter or queue.
 */
final class QuorumBackend implements LatchkeyBackend, LockStore, AdminStore, WakeupBus {
  /** What a quorum can offer when every member offers it. */
  private static final Set<Feature> QUORUM_FEATURES =
      EnumSet.of(
          Feature.READ_WRITE_LOCK,
          Feature.LEASE_TIME,
          Feature.WAKEUP_PUSH,
          Feature.ADMIN,
          Feature.PRESENCE);

  private final List<QuorumMember> members;
  private final QuorumSettings settings;
  private final BackendContext context;
  private final long memberTimeoutMillis;
  private final long roundTimeoutMillis;
  private final Set<Feature> features;
  private final Map<HolderRef, QuorumGrant> grants = new ConcurrentHashMap<>();
  // The merged wake-up channels of each lock name this client listens on (MergedWakeups#attempted).
  private final Map<String, Set<MergedWakeups>> lockWakeups = new ConcurrentHashMap<>();
  private final Object[] sendingOrders = new Object[64];
  private final String description;

  private QuorumBackend(
      List<QuorumMember> members, QuorumSettings settings, BackendContext context) {
    this.members = List.copyOf(members);
    this.settings = settings;
    this.context = context;
    this.memberTimeoutMillis = settings.memberTimeoutMillis(context.operationTimeout());
    this.roundTimeoutMillis = settings.roundTimeoutMillis(context.operationTimeout());
    EnumSet<Feature> offered = EnumSet.copyOf(QUORUM_FEATURES);
    for (QuorumMember member : members) {
      LatchkeyBackend backend = member.backend();
      if (backend != null) {
        offered.retainAll(backend.features());
      }
    }
    this.features = Set.copyOf(offered);
    for (int i = 0; i < sendingOrders.length; i++) {
      sendingOrders[i] = new Object();
    }
    this.description =
        "quorum:"
            + members.stream().map(QuorumMember::description).collect(Collectors.joining(","));
  }

  /**
   * Opens every member with the client's context; a member that cannot be opened stays in the
   * quorum as one whose calls fail, so that a client can start while a minority is down.
   */
  static QuorumBackend open(
      List<BackendFactory> factories, QuorumSettings settings, BackendContext context) {
    if (context.leaseTime().compareTo(settings.maxLease()) > 0) {
      throw new IllegalArgumentException(
          "the watchdog lease "
              + context.leaseTime()
              + " is longer than the quorum's maxLease "
              + settings.maxLease()
              + ": raise maxLease (a member that restarted empty is quarantined that long)");
    }
    // Members report nothing between calls that the quorum could use: a member's loss of a grant
    // is one vote less, which renewal counts.
    BackendContext memberContext =
        new BackendContext(
            context.clientId(),
            context.operationTimeout(),
            context.leaseTime(),
            context.scheduler(),
            context.blockingExecutor(),
            GrantEvents.NONE);
    List<QuorumMember> members = new ArrayList<>();
    List<RuntimeException> failures = new ArrayList<>();
    try {
      for (BackendFactory factory : factories) {
        int index = members.size();
        try {
          LatchkeyBackend backend = factory.open(memberContext);
          members.add(QuorumMember.opened(index, backend));
          if (backend.fences().isEmpty()) {
            throw new IllegalArgumentException(
                "quorum member "
                    + backend.description()
                    + " keeps no fence store (FenceStore), which the quorum's fencing tokens"
                    + " and restart rule need");
          }
        } catch (IllegalArgumentException e) {
          throw e;
        } catch (RuntimeException e) {
          failures.add(e);
          members.add(QuorumMember.unreachable(index, e));
        }
      }
    } catch (RuntimeException e) {
      closeAll(members);
      throw e;
    }
    int majority = factories.size() / 2 + 1;
    if (factories.size() - failures.size() < majority) {
      closeAll(members);
      BackendUnavailableException unavailable =
          new BackendUnavailableException(
              "only "
                  + (factories.size() - failures.size())
                  + " of "
                  + factories.size()
                  + " quorum members could be opened, a majority is "
                  + majority,
              failures.get(0));
      failures.stream().skip(1).forEach(unavailable::addSuppressed);
      throw unavailable;
    }
    QuorumBackend quorum = new QuorumBackend(members, settings, context);
    quorum.readEpochs();
    return quorum;
  }

  private static void closeAll(List<QuorumMember> members) {
    for (QuorumMember member : members) {
      LatchkeyBackend backend = member.backend();
      if (backend != null) {
        backend.close();
      }
    }
  }

  /** Reads every member's epoch record and seeds the empty ones, before the first attempt. */
  private void readEpochs() {
    MemberRound.start(
            members,
            member -> member.fences(fences -> fences.epoch(0, 0)),
            roundTimeoutMillis,
            scheduler(),
            MemberRound::all,
            MemberRound::ignore)
        .thenAccept(
            round -> {
              for (int i = 0; i < round.size(); i++) {
                Epoch epoch = round.answer(i);
                if (epoch != null) {
                  round.member(i).observe(epoch);
                }
              }
            })
        .join();
    seedEmptyMembers().join();
  }

  /**
   * Gives every member last seen empty an epoch record: one above every epoch seen, quarantined for
   * {@code maxLease} (it restarted without its data, or is new while others are in use); or, when a
   * majority was read and every member read was empty (a quorum's first start), epoch 1 without
   * quarantine. Members that answer nothing are seeded when they next answer empty.
   *
   * @return completes when every seeding call answered
   */
  CompletableFuture<Void> seedEmptyMembers() {
    long highest = 0;
    int read = 0;
    for (QuorumMember member : members) {
      if (member.epoch() != QuorumMember.UNKNOWN) {
        read++;
        highest = Math.max(highest, member.epoch());
      }
    }
    long epoch;
    long quarantineMillis;
    if (highest > 0) {
      epoch = highest + 1;
      quarantineMillis = settings.maxLease().toMillis();
    } else if (read >= majority()) {
      epoch = 1;
      quarantineMillis = 0;
    } else {
      return CompletableFuture.completedFuture(null);
    }
    List<CompletableFuture<?>> seeding = new ArrayList<>();
    for (QuorumMember member : members) {
      if (member.epoch() == 0) {
        seeding.add(
            member
                .fences(fences -> fences.epoch(epoch, quarantineMillis))
                .thenAccept(member::observe)
                .exceptionally(failure -> null)
                .toCompletableFuture());
      }
    }
    return CompletableFuture.allOf(seeding.toArray(CompletableFuture[]::new));
  }

  /**
   * Raises the counting members below {@code token} to it (the lock's fencing counter to the member
   * part, the epoch record to the epoch part), until a majority of members hold a value of at least
   * {@code token} for the lock.
   *
   * @return true once a majority holds it; false if that cannot be had within the member timeout
   */
  CompletionStage<Boolean> writeBack(
      String name, long token, MemberRound<QuorumAcquisition.Vote> round, List<Integer> counted) {
    int atToken = 0;
    List<QuorumMember> lagging = new ArrayList<>();
    for (int i : counted) {
      QuorumAcquisition.Vote vote = round.answer(i);
      if (vote != null && vote.value() >= token) {
        atToken++;
      } else {
        lagging.add(round.member(i));
      }
    }
    if (atToken >= majority()) {
      return CompletableFuture.completedFuture(true);
    }
    long epoch = token >>> QuorumAcquisition.MEMBER_TOKEN_BITS;
    long memberToken = token & QuorumAcquisition.MEMBER_TOKEN_MASK;
    int alreadyAtToken = atToken;
    return MemberRound.start(
            lagging,
            member -> raise(member, name, epoch, memberToken),
            memberTimeoutMillis,
            scheduler(),
            raised -> alreadyAtToken + count(raised) >= majority(),
            MemberRound::ignore)
        .thenApply(raised -> alreadyAtToken + count(raised) >= majority());
  }

  /**
   * Raises one member's fence for {@code name} and then its epoch; true if afterwards it holds at
   * least (epoch, memberToken) with its data intact (an empty member gets a quarantined record from
   * the epoch call, and does not count).
   */
  private CompletionStage<Boolean> raise(
      QuorumMember member, String name, long epoch, long memberToken) {
    CompletionStage<Long> fence = member.fences(fences -> fences.raiseLockFence(name, memberToken));
    CompletionStage<Epoch> record =
        member.fences(fences -> fences.epoch(epoch, settings.maxLease().toMillis()));
    return fence.thenCombine(
        record,
        (raisedTo, after) -> {
          member.observe(after);
          return !after.isQuarantined()
              && (after.value() > epoch || (after.value() == epoch && raisedTo >= memberToken));
        });
  }

  private static int count(MemberRound<Boolean> round) {
    int yes = 0;
    for (int i = 0; i < round.size(); i++) {
      if (Boolean.TRUE.equals(round.answer(i))) {
        yes++;
      }
    }
    return yes;
  }

  /**
   * Records a new grant of {@code holder}, replacing an older one; if another thread of the same
   * owner registered the same grant a moment ago, that one.
   */
  QuorumGrant register(HolderRef holder, long token) {
    return grants.compute(
        holder,
        (key, old) ->
            old != null && old.token() == token && !old.ended()
                ? old
                : new QuorumGrant(key, token));
  }

  /** Forgets a grant registered for an attempt that was undone before any hold was handed out. */
  void forgetIfUnused(QuorumGrant grant) {
    if (grant.endIfUnused()) {
      grants.remove(grant.holder(), grant);
    }
  }

  /**
   * Undoes one member's grant made for an attempt that did not become a quorum grant. Once.
   *
   * @return completes when the member answered (or the call failed)
   */
  CompletionStage<?> undo(QuorumMember member, HolderRef holder, long memberToken, LockMode mode) {
    return member.call(b -> b.locks().release(new GrantRef(holder, memberToken), mode));
  }

  // ---- what the acquisition needs ----

  List<QuorumMember> members() {
    return members;
  }

  int majority() {
    return members.size() / 2 + 1;
  }

  long memberTimeoutMillis() {
    return memberTimeoutMillis;
  }

  ScheduledExecutorService scheduler() {
    return context.scheduler();
  }

  /** This client's id, which the members record with each grant it makes. */
  String clientId() {
    return context.clientId();
  }

  QuorumSettings settings() {
    return settings;
  }

  Map<HolderRef, QuorumGrant> grants() {
    return grants;
  }

  /**
   * The lock under which this client sends a round of calls about lock {@code name} (attempts,
   * releases, queue leaves): every member then sees this client's calls about it in one order, so
   * their wait queues order this client's waiters alike (docs/backends/quorum.md, "Waiting").
   * Striped: names that share a stripe are ordered together, which costs nothing but a short wait.
   */
  Object sendingOrder(String name) {
    return sendingOrders[Math.floorMod(name.hashCode(), sendingOrders.length)];
  }

  long randomRetryDelay() {
    return ThreadLocalRandom.current().nextLong(settings.retryDelay().toMillis() + 1);
  }

  // ---- LatchkeyBackend ----

  @Override
  public String description() {
    return description;
  }

  @Override
  public String identity() {
    return "quorum:"
        + members.stream()
            .map(
                member -> {
                  LatchkeyBackend backend = member.backend();
                  return backend == null ? member.description() : backend.identity();
                })
            .sorted()
            .collect(Collectors.joining(","));
  }

  @Override
  public Set<Feature> features() {
    return features;
  }

  @Override
  public LockStore locks() {
    return this;
  }

  @Override
  public SemaphoreStore semaphores() {
    throw unsupported(Feature.SEMAPHORE);
  }

  @Override
  public LeasedSemaphoreStore leasedSemaphores() {
    throw unsupported(Feature.LEASED_SEMAPHORE);
  }

  @Override
  public LatchStore latches() {
    throw unsupported(Feature.COUNT_DOWN_LATCH);
  }

  private UnsupportedOperationException unsupported(Feature feature) {
    return new UnsupportedOperationException(
        description + " does not offer " + feature + " (docs/backends/quorum.md)");
  }

  @Override
  public AdminStore admin() {
    return this;
  }

  @Override
  public WakeupBus wakeups() {
    return this;
  }

  @Override
  public void close() {
    closeAll(members);
  }

  // ---- LockStore ----

  @Override
  public CompletionStage<AcquireResult> tryAcquire(LockRequest request) {
    if (request.leaseMillis() > settings.maxLease().toMillis()) {
      return CompletableFuture.failedFuture(
          new IllegalArgumentException(
              "lease of "
                  + request.leaseMillis()
                  + " ms is longer than the quorum's maxLease of "
                  + settings.maxLease().toMillis()
                  + " ms (a member that restarted empty is quarantined that long)"));
    }
    Set<MergedWakeups> listening = lockWakeups.get(request.name());
    if (listening != null) {
      listening.forEach(merged -> merged.attempted(request.owner()));
    }
    return new QuorumAcquisition(this, request).start();
  }

  /**
   * Releases one hold on every member that granted it, each by its own token; a hold was held if a
   * majority says so. A release by {@link GrantRef#ANY_TOKEN} of a grant another client made (a
   * foreign release, the SPI's only use of it) goes to every member with any token.
   */
  @Override
  public CompletionStage<ReleaseResult> release(GrantRef grant, LockMode mode) {
    QuorumGrant held = grants.get(grant.holder());
    Map<QuorumMember, GrantRef> memberGrants = new LinkedHashMap<>();
    int[] holdsLeft = {0};
    if (held != null && grant.matches(held.token())) {
      // The hold is taken off, and the member grants read, in one step with QuorumGrant#attach:
      // a member grant that arrives late and attached after the read would be released by nobody,
      // and would keep the lock on that member for a whole lease. Once the last hold is off, a
      // late member grant finds the grant ended and is undone by its attempt instead.
      QuorumGrant.Released released = held.release(mode);
      holdsLeft[0] = released.holdsLeft();
      released
          .memberTokens()
          .forEach(
              (index, memberToken) ->
                  memberGrants.put(members.get(index), new GrantRef(held.holder(), memberToken)));
    } else if (held == null && grant.fencingToken() == GrantRef.ANY_TOKEN) {
      members.forEach(member -> memberGrants.put(member, grant));
    } else {
      return CompletableFuture.completedFuture(ReleaseResult.NOT_HELD);
    }
    return MemberRound.startInOrder(
            sendingOrder(grant.name()),
            List.copyOf(memberGrants.keySet()),
            member ->
                member.call(
                    b -> b.locks().release(Objects.requireNonNull(memberGrants.get(member)), mode)),
            roundTimeoutMillis,
            scheduler(),
            round ->
                wasHeld(round).size() >= majority()
                    || wasHeld(round).size() + round.pendingCount() < majority(),
            MemberRound::ignore)
        .thenApply(
            round -> {
              List<Integer> remainingByMember = wasHeld(round);
              int remaining;
              if (held != null && grant.matches(held.token())) {
                remaining = holdsLeft[0];
                if (held.ended()) {
                  grants.remove(grant.holder(), held);
                }
              } else {
                remainingByMember.sort(Comparator.reverseOrder());
                remaining =
                    remainingByMember.isEmpty()
                        ? 0
                        : remainingByMember.get(Math.min(majority(), remainingByMember.size()) - 1);
              }
              if (remainingByMember.size() >= majority()) {
                return ReleaseResult.released(remaining);
              }
              // Not held is certain once the members that did not answer could not make a
              // majority with those that held it; the round stops as soon as that is so, which
              // may be before a majority answered (the members not asked never had the grant).
              int unknown = round.size() - round.answeredCount();
              if (remainingByMember.size() + unknown >= majority()) {
                throw unavailable(
                    round.answeredCount(),
                    "release lock '" + grant.name() + "'",
                    round.anyFailure());
              }
              return ReleaseResult.NOT_HELD;
            });
  }

  /** The holds left on each member that held the grant. */
  private static List<Integer> wasHeld(MemberRound<ReleaseResult> round) {
    List<Integer> remaining = new ArrayList<>();
    for (int i = 0; i < round.size(); i++) {
      ReleaseResult result = round.answer(i);
      if (result != null && result.wasHeld()) {
        remaining.add(result.remainingHolds());
      }
    }
    return remaining;
  }

  @Override
  public CompletionStage<Void> leaveQueue(String name, String owner) {
    return MemberRound.startInOrder(
            sendingOrder(name),
            members,
            member ->
                member.call(b -> b.locks().leaveQueue(name, owner).thenApply(done -> Boolean.TRUE)),
            roundTimeoutMillis,
            scheduler(),
            MemberRound::all,
            MemberRound::ignore)
        .thenAccept(round -> requireMajority(round, "leave the queue of lock '" + name + "'"));
  }

  // ---- renewal ----

  @Override
  public CompletionStage<RenewResult> renew(Collection<GrantRef> grantsToRenew, long leaseMillis) {
    Map<GrantRef, QuorumGrant> known = new HashMap<>();
    Set<GrantRef> gone = new HashSet<>();
    for (GrantRef grant : grantsToRenew) {
      QuorumGrant held = grants.get(grant.holder());
      if (held != null && held.token() == grant.fencingToken()) {
        known.put(grant, held);
      } else {
        gone.add(grant);
      }
    }
    Map<Integer, List<GrantRef>> perMember = new HashMap<>();
    for (QuorumGrant held : known.values()) {
      held.memberTokens()
          .forEach(
              (member, token) ->
                  perMember
                      .computeIfAbsent(member, m -> new ArrayList<>())
                      .add(new GrantRef(held.holder(), token)));
    }
    List<QuorumMember> asked =
        members.stream().filter(member -> perMember.containsKey(member.index())).toList();
    // The round ends as soon as every grant is decided (confirmed by a majority, or no longer
    // able to be), not when the slowest member answers: the engine counts the renewed lease from
    // when it sent the renewal, and a member that is frozen or slow would otherwise hold every
    // answer back until the round's bound (80% of the operation timeout), past a short lease.
    return MemberRound.start(
            asked,
            member ->
                member.call(
                    b -> b.renew(perMember.getOrDefault(member.index(), List.of()), leaseMillis)),
            roundTimeoutMillis,
            scheduler(),
            round -> known.values().stream().allMatch(held -> confirmations(round, held).settled()),
            MemberRound::ignore)
        .thenApply(
            round -> {
              Map<GrantRef, Throwable> failed = new HashMap<>();
              known.forEach(
                  (grant, held) -> {
                    Confirmations tally = confirmations(round, held);
                    if (tally.confirmed() >= majority()) {
                      return;
                    }
                    if (tally.possible() < majority()) {
                      gone.add(grant);
                    } else {
                      failed.put(
                          grant,
                          new BackendUnavailableException(
                              description
                                  + ": only "
                                  + tally.confirmed()
                                  + " of "
                                  + members.size()
                                  + " members confirmed the renewal of lock '"
                                  + grant.name()
                                  + "' in time, a majority is "
                                  + majority(),
                              round.anyFailure()));
                    }
                  });
              // The engine bounds a renewal by its lease from when it sent it, less the same drift
              // allowance; a renewal never shortens a lease, so a tiny one only confirms.
              return new RenewResult(gone, failed, -1);
            });
  }

  /**
   * What the members that answered a renewal round so far say of one grant.
   *
   * @param confirmed members (not in quarantine) that renewed their grant of it
   * @param possible members that granted it and did not say it is gone: the most that could confirm
   *     it
   * @param majority the quorum's majority
   */
  private record Confirmations(int confirmed, int possible, int majority) {
    /** Whether the answers still out cannot change the outcome. */
    boolean settled() {
      return confirmed >= majority || possible < majority;
    }
  }

  private Confirmations confirmations(MemberRound<RenewResult> round, QuorumGrant held) {
    int confirmed = 0;
    int lost = 0;
    for (int i = 0; i < round.size(); i++) {
      QuorumMember member = round.member(i);
      GrantRef memberGrant = held.memberGrant(member.index());
      RenewResult answer = round.answer(i);
      if (memberGrant == null || answer == null) {
        continue;
      }
      if (answer.gone().contains(memberGrant)) {
        lost++;
      } else if (!answer.failed().containsKey(memberGrant) && !member.quarantined()) {
        confirmed++;
      }
    }
    return new Confirmations(confirmed, held.memberTokens().size() - lost, majority());
  }

  // ---- WakeupBus ----

  @Override
  public CompletionStage<Subscription> subscribe(
      ResourceType type, String name, Consumer<Wakeup> listener) {
    List<Subscription> active = new ArrayList<>();
    boolean[] cancelled = {false};
    MergedWakeups merged = new MergedWakeups(listener, members.size());
    if (type == ResourceType.LOCK) {
      lockWakeups.computeIfAbsent(name, key -> ConcurrentHashMap.newKeySet()).add(merged);
    }
    return MemberRound.<Subscription>start(
            members,
            member -> member.call(b -> b.wakeups().subscribe(type, name, merged)),
            roundTimeoutMillis,
            scheduler(),
            MemberRound::all,
            (member, late) -> {
              synchronized (active) {
                if (!cancelled[0]) {
                  active.add(late);
                  return;
                }
              }
              late.unsubscribe();
            })
        .thenApply(
            round -> {
              synchronized (active) {
                for (int i = 0; i < round.size(); i++) {
                  Subscription subscription = round.answer(i);
                  if (subscription != null) {
                    active.add(subscription);
                  }
                }
              }
              return () -> {
                List<Subscription> ending;
                if (type == ResourceType.LOCK) {
                  lockWakeups.computeIfPresent(
                      name,
                      (key, listening) -> {
                        listening.remove(merged);
                        return listening.isEmpty() ? null : listening;
                      });
                }
                synchronized (active) {
                  cancelled[0] = true;
                  ending = List.copyOf(active);
                  active.clear();
                }
                return CompletableFuture.allOf(
                    ending.stream()
                        .map(
                            subscription ->
                                subscription
                                    .unsubscribe()
                                    .exceptionally(failure -> null)
                                    .toCompletableFuture())
                        .toArray(CompletableFuture[]::new));
              };
            });
  }

  // ---- AdminStore ----

  @Override
  public CompletionStage<Boolean> forceRelease(String name) {
    return allMembers(b -> b.admin().forceRelease(name))
        .thenApply(
            round -> {
              requireMajority(round, "force-release lock '" + name + "'");
              return anyTrue(round);
            });
  }

  @Override
  public CompletionStage<Boolean> evict(String name, String owner) {
    return allMembers(b -> b.admin().evict(name, owner))
        .thenApply(
            round -> {
              requireMajority(round, "evict an owner of lock '" + name + "'");
              return anyTrue(round);
            });
  }

  private static boolean anyTrue(MemberRound<Boolean> round) {
    for (int i = 0; i < round.size(); i++) {
      if (Boolean.TRUE.equals(round.answer(i))) {
        return true;
      }
    }
    return false;
  }

  /** What one member says of a lock: its records, and the lock's fencing counter. */
  private record MemberView(Optional<LockInfo> info, long fenceCounter) {}

  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    // Each member's records, and its lock's fencing counter (a read: raising to 0 changes
    // nothing), which tells another client's grant's token (QuorumInspection).
    return MemberRound.<MemberView>start(
            members,
            member ->
                member
                    .call(b -> b.admin().inspect(name))
                    .thenCombine(
                        member
                            .fences(fences -> fences.raiseLockFence(name, 0))
                            // Unknown (QuorumInspection then takes the holder's own token).
                            .exceptionally(failure -> -1L),
                        MemberView::new),
            roundTimeoutMillis,
            scheduler(),
            MemberRound::all,
            MemberRound::ignore)
        .thenApply(
            round -> {
              requireMajority(round, "inspect lock '" + name + "'");
              List<LockInfo> seen = new ArrayList<>();
              List<QuorumMember> seenAt = new ArrayList<>();
              List<Long> counters = new ArrayList<>();
              for (int i = 0; i < round.size(); i++) {
                MemberView view = round.answer(i);
                if (view != null && view.info().isPresent()) {
                  seen.add(view.info().get());
                  seenAt.add(round.member(i));
                  counters.add(view.fenceCounter());
                }
              }
              return QuorumInspection.merge(name, seen, seenAt, counters, members.size(), grants);
            });
  }

  @Override
  public CompletionStage<List<LockInfo>> list() {
    return allMembers(b -> b.admin().list())
        .thenApply(
            round -> {
              requireMajority(round, "list locks");
              Map<String, List<LockInfo>> byName = new HashMap<>();
              Map<String, List<QuorumMember>> byNameAt = new HashMap<>();
              for (int i = 0; i < round.size(); i++) {
                List<LockInfo> infos = round.answer(i);
                if (infos == null) {
                  continue;
                }
                for (LockInfo info : infos) {
                  byName.computeIfAbsent(info.name(), n -> new ArrayList<>()).add(info);
                  byNameAt
                      .computeIfAbsent(info.name(), n -> new ArrayList<>())
                      .add(round.member(i));
                }
              }
              List<LockInfo> merged = new ArrayList<>();
              byName.forEach(
                  (name, infos) ->
                      QuorumInspection.merge(
                              name,
                              infos,
                              byNameAt.getOrDefault(name, List.of()),
                              null,
                              members.size(),
                              grants)
                          .ifPresent(merged::add));
              return merged;
            });
  }

  @Override
  public CompletionStage<List<ClientInfo>> clients() {
    return allMembers(b -> b.admin().clients())
        .thenApply(
            round -> {
              requireMajority(round, "list clients");
              Map<String, ClientInfo> byId = new HashMap<>();
              for (int i = 0; i < round.size(); i++) {
                List<ClientInfo> clients = round.answer(i);
                if (clients != null) {
                  clients.forEach(client -> byId.putIfAbsent(client.clientId(), client));
                }
              }
              return List.copyOf(byId.values());
            });
  }

  @Override
  public CompletionStage<Void> heartbeat(ClientInfo self, long timeToLiveMillis) {
    return allMembers(b -> b.admin().heartbeat(self, timeToLiveMillis).thenApply(v -> Boolean.TRUE))
        .thenAccept(round -> requireMajority(round, "write this client's presence record"));
  }

  @Override
  public CompletionStage<Void> leave(String clientId) {
    return allMembers(b -> b.admin().leave(clientId).thenApply(v -> Boolean.TRUE))
        .thenAccept(round -> requireMajority(round, "delete this client's presence record"));
  }

  private <T> CompletableFuture<MemberRound<T>> allMembers(
      java.util.function.Function<LatchkeyBackend, ? extends CompletionStage<T>> call) {
    return MemberRound.start(
        members,
        member -> member.call(call),
        roundTimeoutMillis,
        scheduler(),
        MemberRound::all,
        MemberRound::ignore);
  }

  private void requireMajority(MemberRound<?> round, String what) {
    if (round.answeredCount() < majority()) {
      throw unavailable(round.answeredCount(), what, round.anyFailure());
    }
  }

  /**
   * @param answered how many members answered
   * @param what what they were asked, e.g. "release lock 'a'"
   * @param cause a member's failure, if any
   * @return the failure of a call that fewer than a majority of the members answered
   */
  BackendUnavailableException unavailable(int answered, String what, @Nullable Throwable cause) {
    return new BackendUnavailableException(
        description
            + ": only "
            + answered
            + " of "
            + members.size()
            + " members answered ("
            + what
            + "), a majority is "
            + majority(),
        cause);
  }
}
