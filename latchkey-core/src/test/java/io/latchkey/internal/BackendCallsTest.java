package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.BackendTimeoutException;
import io.latchkey.BackendUnavailableException;
import io.latchkey.memory.ManualTicker;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * The bound on every backend call, on a manual clock: each call fails at its own deadline, however
 * many are in flight and in whatever order they are answered, and an answer that comes after the
 * deadline goes to the call's late-answer handler, once.
 */
class BackendCallsTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(2);

  private final ManualTicker ticker = new ManualTicker();
  private final ManualScheduler scheduler = new ManualScheduler(ticker);
  private final BackendCalls calls = new BackendCalls("test backend", TIMEOUT, scheduler, ticker);
  private final List<String> late = new ArrayList<>();

  private CompletableFuture<String> call(String name, CompletableFuture<String> answer) {
    return calls.call(() -> "op " + name, () -> answer, value -> late.add(name + "=" + value));
  }

  @Test
  void eachCallFailsAtItsOwnDeadline() {
    CompletableFuture<String> first = call("a", new CompletableFuture<>());
    scheduler.advance(Duration.ofMillis(500));
    CompletableFuture<String> second = call("b", new CompletableFuture<>());

    scheduler.advance(Duration.ofMillis(1499));
    assertThat(first).isNotDone();
    scheduler.advance(Duration.ofMillis(1));
    assertThat(first).isCompletedExceptionally();
    assertThatThrownBy(first::join)
        .isInstanceOf(CompletionException.class)
        .cause()
        .isInstanceOf(BackendTimeoutException.class)
        .hasMessage("test backend did not answer 'op a' within PT2S");
    assertThat(second).isNotDone();

    scheduler.advance(Duration.ofMillis(499));
    assertThat(second).isNotDone();
    scheduler.advance(Duration.ofMillis(1));
    assertThat(second).isCompletedExceptionally();
    assertThat(scheduler.pendingTasks()).isZero();
  }

  @Test
  void answeredCallsLeaveTheBoundAndOthersStillExpire() {
    CompletableFuture<String> answerA = new CompletableFuture<>();
    CompletableFuture<String> answerC = new CompletableFuture<>();
    CompletableFuture<String> a = call("a", answerA);
    CompletableFuture<String> b = call("b", new CompletableFuture<>());
    CompletableFuture<String> c = call("c", answerC);
    answerC.complete("done c");
    answerA.complete("done a");

    scheduler.advance(TIMEOUT);

    assertThat(a).isCompletedWithValue("done a");
    assertThat(c).isCompletedWithValue("done c");
    assertThat(b).isCompletedExceptionally();
    assertThat(late).isEmpty();
    assertThat(scheduler.pendingTasks()).isZero();
  }

  @Test
  void anAnswerAfterTheDeadlineGoesToTheLateAnswerHandlerOnce() {
    CompletableFuture<String> answer = new CompletableFuture<>();
    CompletableFuture<String> result = call("a", answer);
    scheduler.advance(TIMEOUT);
    assertThat(result).isCompletedExceptionally();

    answer.complete("granted");

    assertThat(late).containsExactly("a=granted");
    assertThat(result).isCompletedExceptionally();
  }

  @Test
  void aCallerThatGaveUpHandsTheAnswerToTheLateAnswerHandler() {
    CompletableFuture<String> answer = new CompletableFuture<>();
    CompletableFuture<String> result = call("a", answer);
    result.cancel(false);

    answer.complete("granted");

    assertThat(late).containsExactly("a=granted");
  }

  @Test
  void aFailureIsTranslatedAndProvesNothing() {
    CompletableFuture<String> answer = new CompletableFuture<>();
    CompletableFuture<String> result = call("a", answer);

    answer.completeExceptionally(new IOException("connection reset"));

    assertThatThrownBy(result::join)
        .cause()
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessage("test backend failed 'op a': connection reset");
    scheduler.advance(TIMEOUT);
    assertThat(late).isEmpty();
  }

  @Test
  void callsStartedAfterAQuietSpellAreBoundedAgain() {
    CompletableFuture<String> answer = new CompletableFuture<>();
    CompletableFuture<String> answered = call("a", answer);
    answer.complete("fine");
    scheduler.advance(TIMEOUT.multipliedBy(3));
    assertThat(answered).isCompletedWithValue("fine");

    CompletableFuture<String> later = call("b", new CompletableFuture<>());
    scheduler.advance(TIMEOUT.minusMillis(1));
    assertThat(later).isNotDone();
    scheduler.advance(Duration.ofMillis(1));
    assertThat(later).isCompletedExceptionally();
  }

  @Test
  void aClosingSchedulerFailsTheCallsInFlight() {
    scheduler.shutdownNow();

    CompletableFuture<String> result = call("a", new CompletableFuture<>());

    assertThatThrownBy(result::join)
        .cause()
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("this latchkey client is closed");
  }
}
