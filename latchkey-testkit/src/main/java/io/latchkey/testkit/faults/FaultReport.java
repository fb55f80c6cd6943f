package io.latchkey.testkit.faults;

import java.util.List;
import java.util.Map;

/**
 * The figures of one {@link FaultRun}.
 *
 * @param mode what the workers took
 * @param seed the seed of the fault schedule: the same seed replays the same choices of faults,
 *     targets and durations
 * @param durationMillis how long faults were injected
 * @param grants critical sections entered (one per grant)
 * @param threadsPerWorker how many threads of each worker JVM took the lock (the highest thread
 *     number that entered a critical section, plus one)
 * @param passedWithinWorker grants whose section came right after, in order of entry, a section of
 *     another thread of the same worker: the lock passed between two threads of one client, which a
 *     backend that hands over does in the release's own call (the harness cannot tell a hand-over
 *     from a new acquire that won)
 * @param faults faults injected, by kind
 * @param holdersHit faults that caught their target inside the critical section, by kind
 * @param explainedOverlaps pairs of critical sections that overlapped while one of the two holders
 *     was told it had lost its lease ({@code onLost}, {@code isValid()} false at exit, or {@code
 *     LeaseLostException} on release) or the earlier one's explicit lease had run out before the
 *     later one began
 * @param unexplainedOverlaps overlapping pairs with neither excuse: mutual exclusion broken
 *     silently
 * @param unexplained a description of the first unexplained overlaps, with the faults around them
 * @param writesAccepted fenced writes the store accepted
 * @param staleWritesRefused fenced writes the store refused because a newer token had written: the
 *     fence doing its job
 * @param staleWritesAccepted accepted writes whose token was not above every token accepted before
 *     (0 by construction of the store; checked independently)
 * @param supersededWritesAccepted accepted writes made after a grant with a higher token had begun:
 *     stale holders the fence could not stop because the newer holder had not written yet
 * @param repeatedTokens grants that carried a token an earlier, separate grant already had
 * @param repeated a description of the first repeated tokens, with the acquire failures and faults
 *     before them
 * @param counterSets increments applied to the unfenced counter
 * @param counter the counter's final value
 * @param lostUpdates {@code counterSets - counter}: increments overwritten by an overlapping holder
 * @param longestFreeWhileWaitingMillis the longest time no live holder was inside the critical
 *     section while a worker was waiting for it, whatever the faults
 * @param longestFreeAfterDeathMillis the same, only after a holder was killed or stopped and with
 *     no other fault during the gap
 * @param afterDeathGap a description of that longest gap after a death: who left, who entered next,
 *     the faults during it
 * @param longestFreeWithoutFaultMillis the same, for gaps during which no fault was active at all
 * @param longestFreeDuringWaiterFaultMillis the same, for gaps during which only workers other than
 *     the last holder were faulted: a waiter's trouble should not stall the others, so time here is
 *     a grant that no worker knows it holds (an orphaned grant) or, for the fair lock, a queue
 *     place kept for a stopped or cut-off waiter
 * @param waiterFaultGap a description of that longest gap and its faults
 * @param livenessBoundMillis the target for {@code longestFreeAfterDeathMillis}: lease plus renew
 *     interval, plus the server's {@linkplain ServerControl#explicitPermitReapDelay() reap delay}
 *     for permits with an explicit lease
 * @param acquireFailures acquires that threw, by exception
 * @param releaseOutcomes releases, by outcome ({@code OK}, {@code LOST}, {@code ERROR:...})
 * @param toldOfLoss grants whose holder was told it lost the lease
 * @param workerErrors workers that failed unexpectedly
 */
public record FaultReport(
    FaultMode mode,
    long seed,
    long durationMillis,
    long grants,
    int threadsPerWorker,
    long passedWithinWorker,
    Map<FaultKind, Integer> faults,
    Map<FaultKind, Integer> holdersHit,
    long explainedOverlaps,
    long unexplainedOverlaps,
    List<String> unexplained,
    long writesAccepted,
    long staleWritesRefused,
    long staleWritesAccepted,
    long supersededWritesAccepted,
    long repeatedTokens,
    List<String> repeated,
    long counterSets,
    long counter,
    long lostUpdates,
    long longestFreeWhileWaitingMillis,
    long longestFreeAfterDeathMillis,
    String afterDeathGap,
    long longestFreeWithoutFaultMillis,
    long longestFreeDuringWaiterFaultMillis,
    String waiterFaultGap,
    long livenessBoundMillis,
    Map<String, Integer> acquireFailures,
    Map<String, Integer> releaseOutcomes,
    long toldOfLoss,
    List<String> workerErrors) {

  /**
   * @return the whole report as text, one figure per line, unexplained overlaps last
   */
  public String describe() {
    StringBuilder text = new StringBuilder();
    text.append("fault run ").append(mode).append(", seed ").append(seed);
    text.append(", ").append(durationMillis / 1000).append(" s of faults");
    text.append(", ").append(threadsPerWorker).append(" thread(s) per worker\n");
    line(text, "grants", grants);
    line(text, "grants passed within a worker", passedWithinWorker);
    line(text, "faults injected", faults);
    line(text, "faults that caught a holder", holdersHit);
    line(text, "overlaps explained", explainedOverlaps);
    line(text, "overlaps unexplained", unexplainedOverlaps);
    line(text, "fenced writes accepted", writesAccepted);
    line(text, "stale writes refused", staleWritesRefused);
    line(text, "stale writes accepted", staleWritesAccepted);
    line(text, "superseded writes accepted", supersededWritesAccepted);
    line(text, "repeated tokens", repeatedTokens);
    line(text, "counter", counter + " of " + counterSets + " increments");
    line(text, "lost updates", lostUpdates);
    line(text, "longest free while waiting", longestFreeWhileWaitingMillis + " ms");
    line(
        text,
        "longest free after a holder died",
        "bound " + livenessBoundMillis + " ms: " + afterDeathGap);
    line(text, "longest free without faults", longestFreeWithoutFaultMillis + " ms");
    line(text, "longest free, only waiters faulted", waiterFaultGap);
    line(text, "holders told of lease loss", toldOfLoss);
    line(text, "acquire failures", acquireFailures);
    line(text, "releases", releaseOutcomes);
    if (!workerErrors.isEmpty()) {
      line(text, "worker errors", workerErrors);
    }
    unexplained.forEach(u -> text.append("  unexplained: ").append(u).append('\n'));
    repeated.forEach(r -> text.append("  repeated: ").append(r).append('\n'));
    return text.toString();
  }

  private static void line(StringBuilder text, String label, Object value) {
    text.append(String.format("  %-34s %s%n", label, value));
  }
}
