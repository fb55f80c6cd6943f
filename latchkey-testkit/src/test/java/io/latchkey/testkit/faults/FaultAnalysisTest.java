package io.latchkey.testkit.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.faults.History.Fault;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The analyser on hand-made histories: each figure must see what it claims to see. */
class FaultAnalysisTest {
  private static final long LEASE = ms(2000);
  private static final long RENEW = ms(666);
  private static final long REAP = ms(250);

  private final History history = new History();
  private final List<FencedStore.Write> writes = new ArrayList<>();

  @Test
  void sectionsOneAfterAnotherDoNotOverlap() {
    section(1, 101, 0, 20);
    section(2, 102, 25, 45);
    FaultReport report = analyse(FaultMode.WATCHDOG_LOCK, 2, 2);
    assertThat(report.grants()).isEqualTo(2);
    assertThat(report.explainedOverlaps()).isZero();
    assertThat(report.unexplainedOverlaps()).isZero();
    assertThat(report.repeatedTokens()).isZero();
    assertThat(report.lostUpdates()).isZero();
  }

  @Test
  void anOverlapWhoseEarlierHolderWasNeverToldIsUnexplained() {
    section(1, 101, 0, 3000);
    history.fault(new Fault(FaultKind.FREEZE_CONNECTION, 1, true, ms(10), ms(2500)));
    section(2, 102, 2100, 2150);
    FaultReport report = analyse(FaultMode.WATCHDOG_LOCK, 2, 1);
    assertThat(report.unexplainedOverlaps()).isEqualTo(1);
    assertThat(report.explainedOverlaps()).isZero();
    assertThat(report.unexplained()).singleElement().asString().contains("FREEZE_CONNECTION");
    assertThat(report.lostUpdates()).isEqualTo(1);
  }

  @Test
  void anyOfTheThreeWaysOfTellingExplainsAnOverlap() {
    section(1, 101, 0, 3000);
    history.record(1, "LOST " + ms(2900) + " 101");
    section(2, 102, 2100, 2150);
    sectionEndingWith(3, 103, 4000, 7000, "false", "OK");
    section(4, 104, 6100, 6150);
    sectionEndingWith(5, 105, 8000, 11000, "true", "LOST");
    section(6, 106, 10100, 10150);
    FaultReport report = analyse(FaultMode.WATCHDOG_LOCK, 6, 6);
    assertThat(report.explainedOverlaps()).isEqualTo(3);
    assertThat(report.unexplainedOverlaps()).isZero();
    assertThat(report.toldOfLoss()).isEqualTo(3);
  }

  @Test
  void aLaterHolderToldItsGrantWasAlreadyLostExplainsTheOverlapToo() {
    section(1, 102, 0, 100);
    sectionEndingWith(2, 101, 50, 60, "false", "LOST");
    FaultReport report = analyse(FaultMode.WATCHDOG_LOCK, 2, 2);
    assertThat(report.explainedOverlaps()).isEqualTo(1);
    assertThat(report.unexplainedOverlaps()).isZero();
  }

  @Test
  void anExplicitLeaseThatRanOutExplainsAnOverlapButOnlyAfterItsTime() {
    section(1, 101, 0, 3000);
    section(2, 102, 2100, 2150);
    section(3, 103, 4000, 7000);
    section(4, 104, 5000, 5050);
    FaultReport report = analyse(FaultMode.EXPLICIT_LEASE_LOCK, 4, 4);
    assertThat(report.explainedOverlaps()).isEqualTo(1);
    assertThat(report.unexplainedOverlaps()).isEqualTo(1);
    assertThat(report.unexplained()).singleElement().asString().contains("token 103");
  }

  @Test
  void aTokenGrantedTwiceIsRepeated() {
    history.record(1, "WAIT " + ms(1000));
    history.record(1, "FAILED " + ms(2000) + " BackendTimeoutException");
    history.fault(new Fault(FaultKind.FREEZE_CONNECTION, 1, false, ms(1500), ms(2500)));
    section(1, 101, 3000, 3010);
    section(1, 101, 3020, 3030);
    section(3, 102, 3040, 3050);
    FaultReport report = analyse(FaultMode.WATCHDOG_LOCK, 3, 3);
    assertThat(report.repeatedTokens()).isEqualTo(1);
    assertThat(report.repeated())
        .singleElement()
        .asString()
        .contains("token 101 granted 2 times to workers [1]")
        .contains("BackendTimeoutException(worker 1, -1000)")
        .contains("FREEZE_CONNECTION(worker 1, -1500..-500)");
  }

  @Test
  void theStoreRecordShowsRefusedStaleAndSupersededWrites() {
    section(1, 101, 0, 3000);
    section(2, 102, 2100, 2150);
    writes.add(new FencedStore.Write(ms(2110), 102, 2, true, Long.MIN_VALUE));
    writes.add(new FencedStore.Write(ms(2990), 101, 1, false, 102));
    section(3, 103, 4000, 7000);
    section(4, 104, 6100, 6150);
    // Worker 3 wrote after worker 4 entered but before worker 4 wrote: the fence cannot know.
    writes.add(new FencedStore.Write(ms(6120), 103, 3, true, 102));
    writes.add(new FencedStore.Write(ms(6140), 104, 4, true, 103));
    // A store that took an old token would be caught.
    writes.add(new FencedStore.Write(ms(6145), 103, 3, true, 104));
    FaultReport report = analyse(FaultMode.WATCHDOG_LOCK, 4, 4);
    assertThat(report.staleWritesRefused()).isEqualTo(1);
    assertThat(report.writesAccepted()).isEqualTo(4);
    assertThat(report.supersededWritesAccepted()).isEqualTo(2);
    assertThat(report.staleWritesAccepted()).isEqualTo(1);
  }

  @Test
  void livenessMeasuresTheFreeTimeAfterAHolderDiedWhileOthersWaited() {
    section(1, 101, 0, 100);
    history.record(2, "WAIT " + ms(50));
    history.record(1, "ENTER " + ms(110) + " 102");
    kill(1, 200);
    enterAndExit(2, "", 103, 2400, 2420, "true");
    FaultReport report = analyse(FaultMode.WATCHDOG_LOCK, 3, 3);
    assertThat(report.longestFreeAfterDeathMillis()).isEqualTo(2200);
    assertThat(report.longestFreeWhileWaitingMillis()).isEqualTo(2200);
    // Between worker 1's two sections worker 2 waited 10 ms with no fault about.
    assertThat(report.longestFreeWithoutFaultMillis()).isEqualTo(10);
    assertThat(report.livenessBoundMillis()).isEqualTo(2666);
  }

  @Test
  void theBoundOfPermitsWithAnExplicitLeaseIncludesTheServersReapDelayAndNoOtherModesDoes() {
    history.record(1, "ENTER " + ms(0) + " 101");
    history.record(2, "WAIT " + ms(10));
    kill(1, 100);
    enterAndExit(2, "", 102, 2900, 2920, "true");

    FaultReport permits = analyse(FaultMode.EXPLICIT_LEASE_SEMAPHORE, 1, 1);
    assertThat(permits.longestFreeAfterDeathMillis()).isEqualTo(2800);
    assertThat(permits.livenessBoundMillis())
        .as("lease + renew interval + reap delay")
        .isEqualTo(2916);
    assertThat(analyse(FaultMode.EXPLICIT_LEASE_LOCK, 1, 1).livenessBoundMillis()).isEqualTo(2666);
    assertThat(analyse(FaultMode.LEASED_SEMAPHORE, 1, 1).livenessBoundMillis()).isEqualTo(2666);
  }

  @Test
  void aStoppedHolderStopsOccupyingTheLockAndAnotherFaultInTheGapIsSetApart() {
    section(1, 101, 0, 100);
    history.record(2, "WAIT " + ms(100));
    history.record(1, "ENTER " + ms(150) + " 102");
    history.fault(new Fault(FaultKind.PAUSE_HOLDER, 1, true, ms(160), ms(5000)));
    history.fault(new Fault(FaultKind.CRASH_SERVER, -1, false, ms(1000), ms(1500)));
    enterAndExit(2, "", 103, 3160, 3200, "true");
    history.record(1, "EXIT " + ms(5010) + " 102 false");
    FaultReport report = analyse(FaultMode.EXPLICIT_LEASE_LOCK, 3, 3);
    assertThat(report.longestFreeWhileWaitingMillis()).isEqualTo(3000);
    assertThat(report.longestFreeAfterDeathMillis()).isZero();
    assertThat(report.explainedOverlaps()).isEqualTo(1);
  }

  @Test
  void aStallWhileOnlyAnotherWaiterWasFaultedIsSetApart() {
    section(1, 101, 0, 100);
    history.record(2, "WAIT " + ms(50));
    history.fault(new Fault(FaultKind.FREEZE_CONNECTION, 3, false, ms(90), ms(1500)));
    enterAndExit(2, "", 102, 1900, 1920, "true");
    FaultReport report = analyse(FaultMode.WATCHDOG_LOCK, 2, 2);
    assertThat(report.longestFreeDuringWaiterFaultMillis()).isEqualTo(1800);
    assertThat(report.waiterFaultGap()).contains("FREEZE_CONNECTION(worker 3)");
    assertThat(report.longestFreeAfterDeathMillis()).isZero();
    assertThat(report.longestFreeWithoutFaultMillis()).isZero();
  }

  @Test
  void aGapWithoutFaultsCountsOnlyTheTimeSomeoneWaited() {
    section(1, 101, 0, 100);
    history.record(2, "WAIT " + ms(400));
    enterAndExit(2, "", 102, 700, 720, "true");
    FaultReport report = analyse(FaultMode.FAIR_LOCK, 2, 2);
    assertThat(report.longestFreeWithoutFaultMillis()).isEqualTo(300);
  }

  @Test
  void twoThreadsOfOneWorkerAreTwoHolders() {
    threadSection(1, 0, 101, 0, 3000);
    threadSection(1, 1, 102, 2100, 2150);
    FaultReport report = analyse(FaultMode.WATCHDOG_LOCK, 2, 1);
    assertThat(report.threadsPerWorker()).isEqualTo(2);
    assertThat(report.unexplainedOverlaps()).isEqualTo(1);
    assertThat(report.unexplained())
        .singleElement()
        .asString()
        .contains("earlier worker 1#0 token 101")
        .contains("overlapped by worker 1#1 token 102");
  }

  @Test
  void aLossIsToldToTheThreadThatHeldTheGrant() {
    threadSection(1, 0, 101, 0, 3000);
    history.record(1, "#1 LOST " + ms(2900) + " 101");
    threadSection(1, 1, 102, 2100, 2150);
    FaultReport report = analyse(FaultMode.WATCHDOG_LOCK, 2, 1);
    assertThat(report.toldOfLoss()).isZero();
    assertThat(report.unexplainedOverlaps()).isEqualTo(1);
  }

  @Test
  void aKillEndsEveryThreadOfTheWorkerAndGrantsPassedBetweenThreadsAreCounted() {
    threadSection(1, 0, 101, 0, 20);
    threadSection(1, 1, 102, 21, 40);
    threadSection(2, 0, 103, 41, 60);
    threadSection(1, 2, 104, 61, 80);
    history.record(2, "#0 WAIT " + ms(81));
    history.record(1, "#3 ENTER " + ms(90) + " 105 20");
    assertThat(history.inSection(1)).isTrue();
    kill(1, 200);
    assertThat(history.inSection(1)).isFalse();
    history.record(2, "#1 WAIT " + ms(300));
    history.record(2, "#1 FAILED " + ms(1300) + " BackendTimeoutException");
    enterAndExit(2, "#0 ", 106, 2400, 2420, "true");
    FaultReport report = analyse(FaultMode.WATCHDOG_LOCK, 6, 6);
    assertThat(report.threadsPerWorker()).isEqualTo(4);
    // 101 to 102 and 104 to 105 stayed in worker 1; 102 to 103 and 103 to 104 did not.
    assertThat(report.passedWithinWorker()).isEqualTo(2);
    assertThat(report.longestFreeAfterDeathMillis()).isEqualTo(2200);
    assertThat(report.afterDeathGap())
        .isEqualTo(
            "2200 ms after worker 1#3 left, until worker 2#0 entered, during no fault;"
                + " acquire failures {BackendTimeoutException=1}");
    assertThat(report.unexplainedOverlaps()).isZero();
  }

  @Test
  void aWaiterPausedWhileAnotherOfItsThreadsHoldsTheLockStopsThatHolder() {
    history.record(2, "#0 WAIT " + ms(50));
    history.record(1, "#0 WAIT " + ms(80));
    history.record(1, "#1 ENTER " + ms(100) + " 101 20");
    history.fault(new Fault(FaultKind.PAUSE_WAITER, 1, true, ms(110), ms(5000)));
    history.record(1, "#1 EXIT " + ms(5010) + " 101 false");
    history.record(2, "#0 ENTER " + ms(2200) + " 102");
    history.record(2, "#0 EXIT " + ms(2220) + " 102 true");
    FaultReport report = analyse(FaultMode.WATCHDOG_LOCK, 2, 2);
    assertThat(report.holdersHit()).containsEntry(FaultKind.PAUSE_WAITER, 1);
    assertThat(report.longestFreeAfterDeathMillis()).isEqualTo(2090);
    assertThat(report.explainedOverlaps()).isEqualTo(1);
  }

  @Test
  void theStoreFencesWritesAndCountsSets() throws Exception {
    try (FencedStore store = FencedStore.start();
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), store.port());
        BufferedReader in =
            new BufferedReader(
                new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        Writer out = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8)) {
      assertThat(call(in, out, "WRITE 5 1")).isEqualTo("OK");
      assertThat(call(in, out, "WRITE 5 2")).isEqualTo("REFUSED 5");
      assertThat(call(in, out, "WRITE 4 2")).isEqualTo("REFUSED 5");
      assertThat(call(in, out, "WRITE 6 2")).isEqualTo("OK");
      assertThat(call(in, out, "GET")).isEqualTo("VALUE 0");
      assertThat(call(in, out, "SET 1 1")).isEqualTo("OK");
      assertThat(call(in, out, "SET 1 2")).isEqualTo("OK");
      assertThat(call(in, out, "GET")).isEqualTo("VALUE 1");
      assertThat(store.sets()).isEqualTo(2);
      assertThat(store.counter()).isEqualTo(1);
      assertThat(store.writes())
          .extracting(FencedStore.Write::accepted)
          .containsExactly(true, false, false, true);
      assertThat(store.writes().get(3).lastAcceptedBefore()).isEqualTo(5);
    }
  }

  private static String call(BufferedReader in, Writer out, String line) throws Exception {
    out.write(line + "\n");
    out.flush();
    return in.readLine();
  }

  private void section(int worker, long token, long enterMs, long exitMs) {
    sectionEndingWith(worker, token, enterMs, exitMs, "true", "OK");
  }

  private void sectionEndingWith(
      int worker, long token, long enterMs, long exitMs, String valid, String release) {
    linesOfSection(worker, "", token, enterMs, exitMs, valid, release);
  }

  /** A section as a worker's thread prints it, its lines starting with {@code #thread}. */
  private void threadSection(int worker, int thread, long token, long enterMs, long exitMs) {
    linesOfSection(worker, "#" + thread + " ", token, enterMs, exitMs, "true", "OK");
  }

  private void linesOfSection(
      int worker,
      String prefix,
      long token,
      long enterMs,
      long exitMs,
      String valid,
      String release) {
    history.record(worker, prefix + "WAIT " + ms(enterMs - 1));
    enterAndExit(worker, prefix, token, enterMs, exitMs, valid);
    history.record(worker, prefix + "RELEASED " + ms(exitMs + 1) + " " + token + " " + release);
  }

  /** A section entered without a printed wait, with no release printed. */
  private void enterAndExit(
      int worker, String prefix, long token, long enterMs, long exitMs, String valid) {
    history.record(worker, prefix + "ENTER " + ms(enterMs) + " " + token);
    history.record(worker, prefix + "EXIT " + ms(exitMs) + " " + token + " " + valid);
  }

  /** Worker {@code worker} killed at {@code atMs} by a fault that began 5 ms before. */
  private void kill(int worker, long atMs) {
    history.killed(worker, ms(atMs));
    history.fault(new Fault(FaultKind.KILL_WORKER, worker, true, ms(atMs - 5), ms(atMs)));
  }

  private FaultReport analyse(FaultMode mode, long sets, long counter) {
    history.runEnded(ms(100_000));
    return new FaultAnalysis(mode, LEASE, RENEW, REAP)
        .analyse(history, writes, sets, counter, 42, 1000);
  }

  private static long ms(long millis) {
    return TimeUnit.MILLISECONDS.toNanos(millis);
  }
}
