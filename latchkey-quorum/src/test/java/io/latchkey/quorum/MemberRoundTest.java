package io.latchkey.quorum;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.BackendTimeoutException;
import io.latchkey.spi.CallerWaits;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** How a round of member calls tells the answers it keeps from the late ones. */
class MemberRoundTest {
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void stopScheduler() {
    scheduler.shutdownNow();
  }

  /**
   * The round closes right after an answer was recorded (here its own test closes it, as another
   * thread's completeNow or timeout can at that moment): the answer is the round's, and only the
   * answers that arrive after it closed go to the late consumer. Before, the answer went to both,
   * and a quorum attempt attached a member grant and then undid it while its release was under way.
   */
  @Test
  void anAnswerTheRoundKeptIsNotAlsoLate() {
    List<QuorumMember> members = twoMembers();
    CompletableFuture<String> first = new CompletableFuture<>();
    CompletableFuture<String> second = new CompletableFuture<>();
    List<String> late = new CopyOnWriteArrayList<>();

    CompletableFuture<MemberRound<String>> done =
        MemberRound.start(
            members,
            member -> member.index() == 0 ? first : second,
            60_000,
            scheduler,
            round -> {
              round.completeNow();
              return false;
            },
            (member, answer) -> late.add(answer));
    first.complete("kept");

    MemberRound<String> round = done.join();
    assertThat(round.answer(0)).isEqualTo("kept");
    assertThat(late).isEmpty();
    second.complete("late");
    assertThat(late).containsExactly("late");
  }

  /**
   * A caller that waits for the quorum's answer ({@link CallerWaits}, the blocking {@code lock()})
   * does not let a member run its call on the caller's thread: that member would hold back the
   * calls to the others until it is done.
   */
  @Test
  void noMemberRunsItsCallOnAWaitingCallersThread() {
    List<QuorumMember> members = twoMembers();
    List<Boolean> mayRunHere = new CopyOnWriteArrayList<>();

    CallerWaits.begin();
    try {
      MemberRound.start(
              members,
              member -> {
                mayRunHere.add(CallerWaits.take());
                return CompletableFuture.completedFuture("answered");
              },
              60_000,
              scheduler,
              MemberRound::all,
              MemberRound::ignore)
          .join();
    } finally {
      CallerWaits.end();
    }
    assertThat(mayRunHere).containsExactly(false, false);
  }

  /**
   * A member that leaves a round unanswered at the round's bound is marked as not answering (a
   * shared quorum attempt does not wait for it), until it answers a round within that round's
   * bound: an answer that comes after the bound leaves the mark, else a member that always answers
   * that late would cost every shared attempt the bound.
   */
  @Test
  void aMemberThatLeftARoundUnansweredIsMarkedUntilItAnswers() {
    List<QuorumMember> members = twoMembers();
    CompletableFuture<String> silent = new CompletableFuture<>();

    MemberRound<String> round =
        MemberRound.start(
                members,
                member ->
                    member.index() == 0 ? CompletableFuture.completedFuture("answered") : silent,
                1,
                scheduler,
                MemberRound::all,
                MemberRound::ignore)
            .join();
    assertThat(round.failure(1)).isInstanceOf(BackendTimeoutException.class);
    assertThat(members.get(0).answering()).isTrue();
    assertThat(members.get(1).answering()).isFalse();

    silent.complete("late");
    assertThat(members.get(1).answering()).as("after an answer past the bound").isFalse();

    MemberRound.start(
            members,
            member -> CompletableFuture.completedFuture("in time"),
            60_000,
            scheduler,
            MemberRound::all,
            MemberRound::ignore)
        .join();
    assertThat(members.get(1).answering()).as("after an answer within the bound").isTrue();
  }

  /** Two members whose own calls are never made: each test answers for them. */
  private static List<QuorumMember> twoMembers() {
    return List.of(
        QuorumMember.unreachable(0, new IllegalStateException("not called")),
        QuorumMember.unreachable(1, new IllegalStateException("not called")));
  }
}
