package io.latchkey.quorum;

import io.latchkey.BackendTimeoutException;
import io.latchkey.spi.CallerWaits;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * One call to each of some members, sent at once, that completes as soon as its {@code enough} test
 * says the outcome is known (a majority granted, or can no longer), or every member answered, or
 * the member timeout passed (the members still out count as failed). An answer that arrives after
 * the round completed goes to its {@code late} consumer, so that a grant nobody counted is undone
 * exactly once (ADR 0007). After completion the round does not change.
 *
 * @param <T> the answer of one member
 */
final class MemberRound<T> {
  private final List<QuorumMember> members;
  private final List<@Nullable T> answers;
  private final List<@Nullable Throwable> failures;
  private final CompletableFuture<MemberRound<T>> completion = new CompletableFuture<>();
  private final Predicate<MemberRound<T>> enough;
  private final BiConsumer<QuorumMember, T> late;
  private @Nullable ScheduledFuture<?> timer;
  private int outstanding;
  private boolean closed;
  // When the round's bound ends (System.nanoTime()); set before the first call is sent.
  private long boundNanos;

  private MemberRound(
      List<QuorumMember> members,
      Predicate<MemberRound<T>> enough,
      BiConsumer<QuorumMember, T> late) {
    this.members = List.copyOf(members);
    this.answers = new ArrayList<>(members.size());
    this.failures = new ArrayList<>(members.size());
    for (int i = 0; i < members.size(); i++) {
      answers.add(null);
      failures.add(null);
    }
    this.outstanding = members.size();
    this.enough = enough;
    this.late = late;
  }

  /**
   * @param members the members to call, each once
   * @param call the call of one member
   * @param timeoutMillis the bound on the round
   * @param scheduler runs the bound's timer
   * @param enough whether the answers so far decide the round (tested under the round's lock)
   * @param late receives answers that arrive after the round completed
   * @return the round, once complete
   */
  static <T> CompletableFuture<MemberRound<T>> start(
      List<QuorumMember> members,
      Function<QuorumMember, CompletionStage<T>> call,
      long timeoutMillis,
      ScheduledExecutorService scheduler,
      Predicate<MemberRound<T>> enough,
      BiConsumer<QuorumMember, T> late) {
    return startInOrder(null, members, call, timeoutMillis, scheduler, enough, late);
  }

  /**
   * Like {@link #start}, but the calls are sent while holding {@code order}: rounds that share it
   * reach every member in the same order (a member's connection keeps the order of the calls sent
   * on it). The answers are handled after the lock is let go, so no answer's handler runs under it.
   *
   * <p>{@code order} is the lock that orders the sending of rounds, or null for none; the other
   * parameters and the result are {@link #start}'s.
   */
  static <T> CompletableFuture<MemberRound<T>> startInOrder(
      @Nullable Object order,
      List<QuorumMember> members,
      Function<QuorumMember, CompletionStage<T>> call,
      long timeoutMillis,
      ScheduledExecutorService scheduler,
      Predicate<MemberRound<T>> enough,
      BiConsumer<QuorumMember, T> late) {
    // A member that ran its call on this thread would hold back the calls to the others.
    CallerWaits.decline();
    MemberRound<T> round = new MemberRound<>(members, enough, late);
    if (members.isEmpty()) {
      round.completion.complete(round);
      return round.completion;
    }
    synchronized (round) {
      round.boundNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
      round.timer = scheduler.schedule(round::timeOut, timeoutMillis, TimeUnit.MILLISECONDS);
    }
    List<CompletionStage<T>> sent = new ArrayList<>(round.members.size());
    if (order == null) {
      round.members.forEach(member -> sent.add(call.apply(member)));
    } else {
      synchronized (order) {
        round.members.forEach(member -> sent.add(call.apply(member)));
      }
    }
    for (int i = 0; i < sent.size(); i++) {
      int slot = i;
      sent.get(i).whenComplete((answer, failure) -> round.arrived(slot, answer, failure));
    }
    return round.completion;
  }

  /** Waits for every member (or the bound): nothing decides early. */
  static <T> boolean all(MemberRound<T> round) {
    return false;
  }

  /** Drops a late answer. */
  static <T> void ignore(QuorumMember member, T answer) {}

  private void arrived(int slot, @Nullable T answer, @Nullable Throwable failure) {
    boolean complete = false;
    // Whether the answer is late is decided under the lock, when it is (or is not) recorded: the
    // round may close right after recording it (another thread's completeNow or timeOut, or the
    // enough test itself), and an answer the round kept must not also go to the late consumer,
    // which would act on it a second time (a grant's member answer attached and then undone while
    // the grant's release was under way: the release found that member's grant gone).
    boolean arrivedLate;
    boolean withinBound;
    synchronized (this) {
      arrivedLate = closed;
      withinBound = System.nanoTime() - boundNanos < 0;
      if (!closed) {
        if (failure != null || answer == null) {
          failures.set(slot, failure != null ? failure : new IllegalStateException("no answer"));
        } else {
          answers.set(slot, answer);
        }
        outstanding--;
        complete = outstanding == 0 || enough.test(this);
        if (complete) {
          close();
        }
      }
    }
    if (answer != null && failure == null && withinBound) {
      // Within the bound, also after an early decision closed the round. Not an answer that comes
      // after the bound: a member that always answers that late would otherwise be waited for
      // again, to the bound, by every shared attempt. Nor a failure: a frozen member's calls fail
      // when the client library gives up on them, after the bound.
      members.get(slot).answered();
    }
    if (complete) {
      completion.complete(this);
    } else if (arrivedLate && answer != null && failure == null) {
      late.accept(members.get(slot), answer);
    }
  }

  /**
   * Completes the round now with the answers it has, if it has not completed yet: the members still
   * out stay pending, and their answers go to the round's {@code late} consumer.
   */
  void completeNow() {
    synchronized (this) {
      if (closed) {
        return;
      }
      close();
    }
    completion.complete(this);
  }

  private void timeOut() {
    synchronized (this) {
      if (closed) {
        return;
      }
      for (int i = 0; i < members.size(); i++) {
        if (answers.get(i) == null && failures.get(i) == null) {
          members.get(i).leftUnanswered();
          failures.set(
              i,
              new BackendTimeoutException(
                  members.get(i).description() + " did not answer in time"));
        }
      }
      outstanding = 0;
      close();
    }
    completion.complete(this);
  }

  private void close() {
    closed = true;
    if (timer != null) {
      timer.cancel(false);
    }
  }

  int size() {
    return members.size();
  }

  QuorumMember member(int slot) {
    return members.get(slot);
  }

  synchronized @Nullable T answer(int slot) {
    return answers.get(slot);
  }

  synchronized @Nullable Throwable failure(int slot) {
    return failures.get(slot);
  }

  synchronized boolean pending(int slot) {
    return answers.get(slot) == null && failures.get(slot) == null;
  }

  synchronized int pendingCount() {
    return outstanding;
  }

  synchronized int answeredCount() {
    int answered = 0;
    for (T answer : answers) {
      if (answer != null) {
        answered++;
      }
    }
    return answered;
  }

  /**
   * @return the first failure, for messages
   */
  synchronized @Nullable Throwable anyFailure() {
    for (Throwable failure : failures) {
      if (failure != null) {
        return failure;
      }
    }
    return null;
  }
}
