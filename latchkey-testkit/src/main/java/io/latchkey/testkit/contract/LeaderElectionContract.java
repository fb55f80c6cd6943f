package io.latchkey.testkit.contract;

import static io.latchkey.testkit.contract.Awaiting.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Feature;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.LeaderElection;
import io.latchkey.LeaderTerm;
import io.latchkey.LeadershipListener;
import io.latchkey.LeaseLostException;
import io.latchkey.testkit.ContractSupport;
import io.latchkey.testkit.RequiresFeature;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Conformance: leader election on the backend's locks, across clients of this JVM (the
 * multi-process suite runs it across JVMs).
 *
 * <ul>
 *   <li>{@code exactlyOneOfSeveralClientsLeads}: three participants on three clients, one leader;
 *       the others wait, and {@code awaitLeadership(0)} says so at once.
 *   <li>{@code leaderThatLeavesHandsOverAtOnce}: the leader closes; its listener hears its term end
 *       without a loss, and another participant leads with a higher fencing token.
 *   <li>{@code stalledLeaderLosesLoudlyAndIsReplaced}: a leader whose backend stops answering (a
 *       paused process) hears its term end with a lease loss on its callback executor, while
 *       another participant is elected once the lease has run out.
 *   <li>{@code forceReleasedLeaderHearsTheLoss}: an operator's force-release ends the term as a
 *       loss, and the election goes on with a new term.
 *   <li>{@code revocationHandsLeadershipOver}: with {@link Feature#REVOCATION}, a revocation
 *       request for the election's name makes the leader step down in favour of a waiting
 *       participant.
 * </ul>
 */
public abstract class LeaderElectionContract extends ContractSupport {
  private static final Duration WAIT = Awaiting.PATIENCE;
  private static final Duration SHORT_LEASE = Duration.ofMillis(600);

  @Test
  void exactlyOneOfSeveralClientsLeads() throws InterruptedException {
    String name = uniqueName("election");
    List<LeaderElection> participants = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      participants.add(newClient().joinElection(name));
    }

    LeaderElection leader = awaitLeader(participants);

    for (LeaderElection other : participants) {
      if (other != leader) {
        assertThat(other.isLeader()).isFalse();
        assertThat(other.currentTerm()).isEmpty();
        assertThat(other.awaitLeadership(Duration.ZERO)).isEmpty();
      }
    }
    LeaderTerm term = leader.currentTerm().orElseThrow();
    assertThat(term.isValid()).isTrue();
    assertThat(term.electionName()).isEqualTo(name);
    assertThat(term.participantId()).isEqualTo(leader.participantId());
    participants.forEach(LeaderElection::close);
  }

  @Test
  void leaderThatLeavesHandsOverAtOnce() throws InterruptedException {
    String name = uniqueName("election-leave");
    Recorder first = new Recorder();
    LeaderElection leader = client().joinElection(name, first);
    LeaderTerm firstTerm = leader.awaitLeadership(WAIT).orElseThrow();
    Recorder second = new Recorder();
    LeaderElection next = newClient().joinElection(name, second);
    assertThat(next.isLeader()).isFalse();

    leader.close();

    LeaderTerm secondTerm = next.awaitLeadership(WAIT).orElseThrow();
    assertThat(secondTerm.fencingToken()).isGreaterThan(firstTerm.fencingToken());
    assertThat(firstTerm.isValid()).isFalse();
    assertThat(leader.isLeader()).isFalse();
    assertThat(leader.awaitLeadership(WAIT)).as("a closed participant never leads").isEmpty();
    eventually().until(() -> first.events.size() == 2);
    assertThat(first.events).containsExactly("elected " + firstTerm.fencingToken(), "ended left");
    eventually().until(() -> second.events.size() == 1);
    assertThat(second.events).containsExactly("elected " + secondTerm.fencingToken());
    next.close();
  }

  @Test
  // The lease must run out on the backend when renewals stop: a session-bound backend keeps a
  // paused client's holds while its session lives (its own tests cover session expiry).
  @RequiresFeature(Feature.LEASE_TIME)
  void stalledLeaderLosesLoudlyAndIsReplaced() throws InterruptedException {
    String name = uniqueName("election-stalled");
    AtomicBoolean paused = new AtomicBoolean();
    ExecutorService callbacks = executor(1);
    Latchkey stalling =
        newClient(
            backend -> PausingBackend.pausable(backend, paused),
            options -> shortLease(options).callbackExecutor(callbacks));
    Recorder stalledEvents = new Recorder();
    LeaderElection stalled = stalling.joinElection(name, stalledEvents);
    LeaderTerm stalledTerm = stalled.awaitLeadership(WAIT).orElseThrow();
    LeaderElection waiting = newClient(this::shortLease).joinElection(name);

    paused.set(true);

    LeaderTerm next = waiting.awaitLeadership(WAIT).orElseThrow();
    assertThat(next.fencingToken()).isGreaterThan(stalledTerm.fencingToken());
    eventually().until(() -> stalledEvents.events.contains("ended lost"));
    assertThat(stalledTerm.isValid()).isFalse();
    assertThat(stalled.isLeader()).isFalse();
    assertThat(stalledEvents.threads).allMatch(thread -> !thread.startsWith("latchkey-"));
    waiting.close();
    paused.set(false);
    stalled.close();
  }

  @Test
  @RequiresFeature(Feature.ADMIN)
  void forceReleasedLeaderHearsTheLoss() throws InterruptedException {
    String name = uniqueName("election-forced");
    Recorder events = new Recorder();
    Latchkey shortLeases = newClient(this::shortLease);
    LeaderElection leader = shortLeases.joinElection(name, events);
    LeaderTerm first = leader.awaitLeadership(WAIT).orElseThrow();

    assertThat(client().admin().forceRelease(name)).isTrue();

    eventually().until(() -> events.events.contains("ended lost"));
    // The same participant competes again, alone, and leads a new term.
    eventually()
        .until(
            () ->
                leader.currentTerm().map(LeaderTerm::fencingToken).orElse(0L)
                    > first.fencingToken());
    leader.close();
  }

  @Test
  @RequiresFeature(Feature.REVOCATION)
  void revocationHandsLeadershipOver() throws InterruptedException {
    String name = uniqueName("election-revoked");
    Recorder events = new Recorder();
    LeaderElection leader = client().joinElection(name, events);
    LeaderTerm first = leader.awaitLeadership(WAIT).orElseThrow();
    LeaderElection waiting = newClient().joinElection(name);
    eventually().until(() -> queued(name));

    assertThat(newClient().lock(name).requestRevocation()).isTrue();

    LeaderTerm next = waiting.awaitLeadership(WAIT).orElseThrow();
    assertThat(next.fencingToken()).isGreaterThan(first.fencingToken());
    eventually().until(() -> events.events.contains("ended left"));
    assertThat(leader.isLeader()).isFalse();
    waiting.close();
    leader.close();
  }

  /** Whether a participant waits in the queue of the election's lock (or we cannot tell). */
  private boolean queued(String name) {
    if (!client().features().contains(Feature.ADMIN)) {
      return true;
    }
    return client().admin().inspect(name).map(info -> info.queuedWaiters() > 0).orElse(false);
  }

  /** Watchdog leases short enough that a stalled leader is replaced quickly. */
  private LatchkeyOptions.Builder shortLease(LatchkeyOptions.Builder options) {
    return options.leaseTime(SHORT_LEASE).renewInterval(SHORT_LEASE.dividedBy(4));
  }

  private static LeaderElection awaitLeader(List<LeaderElection> participants) {
    List<LeaderElection> leaders = new ArrayList<>();
    eventually()
        .until(
            () -> {
              leaders.clear();
              participants.stream().filter(LeaderElection::isLeader).forEach(leaders::add);
              return leaders.size() == 1;
            });
    return leaders.get(0);
  }

  /** Records a participant's events and the threads they ran on. */
  private static final class Recorder implements LeadershipListener {
    final List<String> events = new CopyOnWriteArrayList<>();
    final List<String> threads = new CopyOnWriteArrayList<>();

    @Override
    public void elected(LeaderTerm term) {
      threads.add(Thread.currentThread().getName());
      events.add("elected " + term.fencingToken());
    }

    @Override
    public void ended(LeaderTerm term, @Nullable LeaseLostException lost) {
      threads.add(Thread.currentThread().getName());
      events.add(lost == null ? "ended left" : "ended lost");
    }
  }
}
