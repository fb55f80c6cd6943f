package io.latchkey.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.Latchkey;
import io.latchkey.LeaderElection;
import io.latchkey.LeaderTerm;
import io.latchkey.LeadershipListener;
import io.latchkey.LeaseLostException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The examples of docs/primitives/leader-election.md. */
class LeaderElectionExamplesTest {
  private static final String URI = "memory:docs-leader-election";

  private final Latchkey latchkey = Latchkey.connect(URI);
  private final Latchkey other = Latchkey.connect(URI);

  @AfterEach
  void close() {
    latchkey.close();
    other.close();
  }

  @Test
  void awaitStyle() throws Exception {
    Journal reports = new Journal();
    // tag::await[]
    try (LeaderElection election = latchkey.joinElection("jobs/nightly-report")) {
      Optional<LeaderTerm> term = election.awaitLeadership(Duration.ofSeconds(10));
      if (term.isPresent() && term.get().isValid()) {
        reports.write("nightly report", term.get().fencingToken());
      }
    } // leaving hands leadership to the next participant at once
    // end::await[]
    assertThat(reports.entries()).containsExactly("nightly report");
  }

  @Test
  void listenerStyle() throws Exception {
    AtomicReference<String> state = new AtomicReference<>("follower");
    // tag::listener[]
    LeaderElection election =
        latchkey.joinElection(
            "jobs/reaper",
            new LeadershipListener() {
              @Override
              public void elected(LeaderTerm term) {
                state.set("leading with token " + term.fencingToken());
              }

              @Override
              public void ended(LeaderTerm term, @Nullable LeaseLostException lost) {
                state.set(lost == null ? "gave up leadership" : "lost leadership: " + lost);
              }
            });
    // end::listener[]
    await().atMost(Duration.ofSeconds(10)).until(() -> state.get().startsWith("leading"));
    election.close();
    await().atMost(Duration.ofSeconds(10)).until(() -> state.get().equals("gave up leadership"));
  }

  @Test
  void handOver() throws Exception {
    // tag::hand-over[]
    LeaderElection first = latchkey.joinElection("jobs/billing");
    LeaderTerm firstTerm = first.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    LeaderElection second = other.joinElection("jobs/billing");
    assertThat(second.isLeader()).isFalse(); // one leader at a time

    first.close();

    LeaderTerm secondTerm = second.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    assertThat(secondTerm.fencingToken()).isGreaterThan(firstTerm.fencingToken());
    assertThat(firstTerm.isValid()).isFalse();
    // end::hand-over[]
    second.close();
  }

  @Test
  void stepDownOnRequest() throws Exception {
    LeaderElection leader = latchkey.joinElection("jobs/indexer");
    LeaderTerm first = leader.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    LeaderElection standby = other.joinElection("jobs/indexer");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> latchkey.admin().inspect("jobs/indexer").orElseThrow().queuedWaiters() == 1);
    // tag::step-down[]
    // From anywhere, e.g. before maintenance of the leader's machine:
    boolean asked = other.lock("jobs/indexer").requestRevocation();
    // end::step-down[]
    assertThat(asked).isTrue();
    LeaderTerm next = standby.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    assertThat(next.fencingToken()).isGreaterThan(first.fencingToken());
    standby.close();
    leader.close();
  }
}
