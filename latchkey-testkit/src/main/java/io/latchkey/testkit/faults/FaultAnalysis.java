package io.latchkey.testkit.faults;

import io.latchkey.testkit.faults.History.Failure;
import io.latchkey.testkit.faults.History.Fault;
import io.latchkey.testkit.faults.History.Section;
import io.latchkey.testkit.faults.History.Wait;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Turns a {@link History} and the {@link FencedStore}'s record into a {@link FaultReport}.
 *
 * <p>How the figures are found:
 *
 * <ul>
 *   <li><b>Overlaps.</b> Sections are sorted by entry; every later section that entered before an
 *       earlier one ended (its {@code EXIT}, or its death) is an overlapping pair unless both are
 *       the same thread's of the same worker (two threads of one worker JVM count as two holders,
 *       as they are two owners for latchkey). It is explained if either holder was told of the loss
 *       in any way, even after the overlap (it then knows its work is suspect; the later one may
 *       hold a grant that reached it after its lease ran out), or, with an explicit lease, if the
 *       earlier lease had run out: its entry plus the lease time is before the later entry (the
 *       grant happened before the entry, so this errs towards "unexplained").
 *   <li><b>Liveness.</b> A section occupies the lock from entry to its end, or until its worker was
 *       stopped (by either pause, as all its threads stop) or killed inside it, whichever comes
 *       first. Between the merged occupied intervals the lock was free; the part of such a gap
 *       during which some worker was in an acquire call is "free while waiting". A gap that follows
 *       a section cut short by a stop or kill, with no other fault overlapping it, is measured
 *       against the liveness bound: lease + renew interval (plus the server's reap delay for
 *       permits with an explicit lease, see {@link ServerControl#explicitPermitReapDelay()}).
 *   <li><b>Stale writes.</b> The store's record is replayed: an accepted write must carry a token
 *       above every token accepted before it. A write accepted after a grant with a higher token
 *       had entered is counted as "superseded": fencing cannot stop it, as the newer holder had not
 *       written yet.
 * </ul>
 */
final class FaultAnalysis {
  private static final int MAX_DETAILS = 10;

  private final FaultMode mode;
  private final long leaseNanos;
  private final long livenessBoundNanos;

  /**
   * @param permitReapNanos the server's {@linkplain ServerControl#explicitPermitReapDelay() reap
   *     delay} for permits with an explicit lease; counts only in {@link
   *     FaultMode#EXPLICIT_LEASE_SEMAPHORE}
   */
  FaultAnalysis(FaultMode mode, long leaseNanos, long renewNanos, long permitReapNanos) {
    this.mode = mode;
    this.leaseNanos = leaseNanos;
    // The lease and a renew interval (it may have been renewed just before the death), and the
    // server's delay in deleting a permit that ran out.
    this.livenessBoundNanos =
        leaseNanos
            + renewNanos
            + (mode == FaultMode.EXPLICIT_LEASE_SEMAPHORE ? permitReapNanos : 0);
  }

  FaultReport analyse(
      History history,
      List<FencedStore.Write> writes,
      long counterSets,
      long counter,
      long seed,
      long durationMillis) {
    List<Section> sections = new ArrayList<>(history.sections());
    sections.sort(Comparator.comparingLong((Section s) -> s.enter));
    List<Fault> faults = history.faults();

    long explained = 0;
    long unexplained = 0;
    List<String> details = new ArrayList<>();
    for (int i = 0; i < sections.size(); i++) {
      Section earlier = sections.get(i);
      for (int j = i + 1; j < sections.size() && sections.get(j).enter < earlier.end; j++) {
        Section later = sections.get(j);
        if (later.sameHolder(earlier)) {
          continue;
        }
        if (explains(earlier, later)) {
          explained++;
        } else {
          unexplained++;
          if (details.size() < MAX_DETAILS) {
            details.add(describe(earlier, later, faults));
          }
        }
      }
    }

    long accepted = 0;
    long refused = 0;
    long staleAccepted = 0;
    long superseded = 0;
    long highest = Long.MIN_VALUE;
    long[] enters = sections.stream().mapToLong(s -> s.enter).toArray();
    long[] highestTokenBy = new long[sections.size()];
    for (int i = 0; i < sections.size(); i++) {
      highestTokenBy[i] =
          Math.max(i == 0 ? Long.MIN_VALUE : highestTokenBy[i - 1], sections.get(i).token);
    }
    for (FencedStore.Write write : writes) {
      if (!write.accepted()) {
        refused++;
        continue;
      }
      accepted++;
      if (write.token() <= highest) {
        staleAccepted++;
      }
      highest = Math.max(highest, write.token());
      int entered = upperBound(enters, write.atNanos());
      if (entered > 0 && highestTokenBy[entered - 1] > write.token()) {
        superseded++;
      }
    }

    long passedWithinWorker = 0;
    for (int i = 1; i < sections.size(); i++) {
      Section before = sections.get(i - 1);
      Section after = sections.get(i);
      if (after.worker == before.worker && after.thread != before.thread) {
        passedWithinWorker++;
      }
    }

    Map<Long, List<Section>> byToken = new LinkedHashMap<>();
    sections.forEach(s -> byToken.computeIfAbsent(s.token, t -> new ArrayList<>()).add(s));
    long repeated = 0;
    List<String> repeatedDetails = new ArrayList<>();
    for (List<Section> same : byToken.values()) {
      repeated += same.size() - 1;
      if (same.size() > 1 && repeatedDetails.size() < MAX_DETAILS) {
        repeatedDetails.add(describeRepeat(same, history.failures(), faults));
      }
    }

    Map<FaultKind, Integer> byKind = new EnumMap<>(FaultKind.class);
    Map<FaultKind, Integer> hit = new EnumMap<>(FaultKind.class);
    for (Fault fault : faults) {
      byKind.merge(fault.kind(), 1, Integer::sum);
      if (fault.inSection()) {
        hit.merge(fault.kind(), 1, Integer::sum);
      }
    }

    Liveness liveness = liveness(sections, history.waits(), faults, history.failures());
    return new FaultReport(
        mode,
        seed,
        durationMillis,
        sections.size(),
        sections.stream().mapToInt(s -> s.thread + 1).max().orElse(1),
        passedWithinWorker,
        byKind,
        hit,
        explained,
        unexplained,
        details,
        accepted,
        refused,
        staleAccepted,
        superseded,
        repeated,
        repeatedDetails,
        counterSets,
        counter,
        counterSets - counter,
        liveness.overall(),
        liveness.afterDeath(),
        liveness.afterDeathGap(),
        liveness.quiet(),
        liveness.waiterFaulted(),
        liveness.waiterFaultedGap(),
        TimeUnit.NANOSECONDS.toMillis(livenessBoundNanos),
        history.acquireFailures(),
        history.releaseOutcomes(),
        sections.stream().filter(Section::told).count(),
        history.errors());
  }

  private boolean explains(Section earlier, Section later) {
    return earlier.told()
        || later.told()
        || (mode.explicitLease() && earlier.enter + leaseNanos <= later.enter);
  }

  private static String describe(Section earlier, Section later, List<Fault> faults) {
    long from = earlier.enter;
    long to = Math.min(earlier.end, later.end);
    StringBuilder around = new StringBuilder();
    for (Fault fault : faults) {
      if (fault.start() <= to && fault.end() >= from - TimeUnit.SECONDS.toNanos(10)) {
        around
            .append(' ')
            .append(fault.kind())
            .append("(worker ")
            .append(fault.worker())
            .append(", ")
            .append(TimeUnit.NANOSECONDS.toMillis(fault.start() - earlier.enter))
            .append("..")
            .append(TimeUnit.NANOSECONDS.toMillis(fault.end() - earlier.enter))
            .append(" ms)");
      }
    }
    return "earlier "
        + earlier
        + " overlapped by "
        + later
        + " for "
        + TimeUnit.NANOSECONDS.toMillis(to - later.enter)
        + " ms, starting "
        + TimeUnit.NANOSECONDS.toMillis(later.enter - earlier.enter)
        + " ms after the earlier entry; faults from 10 s before (ms from earlier entry):"
        + (around.length() == 0 ? " none" : around);
  }

  /**
   * Describes the grants that shared one token: who, when, the acquire failures of those workers in
   * the lease before the first, and the faults around.
   */
  private String describeRepeat(List<Section> same, List<Failure> failures, List<Fault> faults) {
    Section first = same.get(0);
    Section last = same.get(same.size() - 1);
    StringBuilder text = new StringBuilder();
    text.append("token ").append(first.token).append(" granted ").append(same.size());
    text.append(" times to workers ");
    text.append(same.stream().map(s -> s.worker).distinct().map(String::valueOf).toList());
    text.append(" over ").append(TimeUnit.NANOSECONDS.toMillis(last.enter - first.enter));
    text.append(" ms; first ").append(first);
    long from = first.enter - leaseNanos - TimeUnit.SECONDS.toNanos(1);
    text.append("; acquire failures of those workers in the lease before (ms from first entry):");
    boolean anyFailure = false;
    for (Failure failure : failures) {
      boolean sameWorker = same.stream().anyMatch(s -> s.worker == failure.worker());
      if (sameWorker && failure.at() >= from && failure.at() <= first.enter) {
        anyFailure = true;
        text.append(' ').append(failure.exception()).append("(worker ").append(failure.worker());
        text.append(", ").append(TimeUnit.NANOSECONDS.toMillis(failure.at() - first.enter));
        text.append(')');
      }
    }
    text.append(anyFailure ? "" : " none").append("; faults:");
    boolean anyFault = false;
    for (Fault fault : faults) {
      if (fault.start() <= last.end && fault.end() >= from) {
        anyFault = true;
        text.append(' ').append(fault.kind()).append("(worker ").append(fault.worker());
        text.append(", ").append(TimeUnit.NANOSECONDS.toMillis(fault.start() - first.enter));
        text.append("..").append(TimeUnit.NANOSECONDS.toMillis(fault.end() - first.enter));
        text.append(')');
      }
    }
    return text.append(anyFault ? "" : " none").toString();
  }

  /** The longest free-while-waiting gaps, in milliseconds, by what was going on. */
  private record Liveness(
      long overall,
      long afterDeath,
      String afterDeathGap,
      long quiet,
      long waiterFaulted,
      String waiterFaultedGap) {}

  /**
   * Measures the gaps: overall; after a death with no other fault; with no fault at all; and with
   * faults only on workers that were outside the critical section, other than the last holder (a
   * waiter's trouble should not stall the others: time there is a grant nobody knows of, or a
   * fair-queue place kept for a stopped waiter).
   */
  private Liveness liveness(
      List<Section> sections, List<Wait> waits, List<Fault> faults, List<Failure> failures) {
    record Occupied(long start, long end, boolean cutShort, int worker, int thread) {
      String holder() {
        return worker + "#" + thread;
      }
    }
    List<Occupied> occupied = new ArrayList<>();
    for (Section section : sections) {
      long end = section.end;
      boolean cutShort = section.endedBy == History.End.KILLED;
      for (Fault fault : faults) {
        if (stops(fault.kind())
            && fault.worker() == section.worker
            && fault.start() >= section.enter
            && fault.start() < end) {
          end = fault.start();
          cutShort = true;
        }
      }
      occupied.add(new Occupied(section.enter, end, cutShort, section.worker, section.thread));
    }
    occupied.sort(Comparator.comparingLong(Occupied::start));
    long overall = 0;
    long afterDeath = 0;
    String afterDeathGap = "none";
    long quiet = 0;
    long waiterFaulted = 0;
    String waiterFaultedGap = "none";
    int i = 0;
    while (i < occupied.size()) {
      Occupied last = occupied.get(i);
      long reach = last.end();
      int j = i + 1;
      while (j < occupied.size() && occupied.get(j).start() <= reach) {
        if (occupied.get(j).end() >= reach) {
          last = occupied.get(j);
          reach = last.end();
        }
        j++;
      }
      if (j >= occupied.size()) {
        break;
      }
      long gapStart = reach;
      long gapEnd = occupied.get(j).start();
      long waited = waitingWithin(waits, gapStart, gapEnd);
      overall = Math.max(overall, waited);
      Occupied died = last;
      boolean otherFault = false;
      boolean anyFault = false;
      boolean onlyOtherWorkers = true;
      StringBuilder during = new StringBuilder();
      for (Fault fault : faults) {
        if (fault.start() < gapEnd && fault.end() > gapStart) {
          anyFault = true;
          onlyOtherWorkers &=
              !fault.kind().serverFault() && !fault.inSection() && fault.worker() != died.worker();
          during
              .append(' ')
              .append(fault.kind())
              .append("(worker ")
              .append(fault.worker())
              .append(')');
          boolean ownDeath =
              died.cutShort()
                  && fault.worker() == died.worker()
                  && (stops(fault.kind()) || fault.kind() == FaultKind.KILL_WORKER);
          otherFault |= !ownDeath;
        }
      }
      String gap =
          TimeUnit.NANOSECONDS.toMillis(waited)
              + " ms after worker "
              + died.holder()
              + " left, until worker "
              + occupied.get(j).holder()
              + " entered, during"
              + (during.length() == 0 ? " no fault" : during)
              + failuresWithin(failures, gapStart, gapEnd);
      if (died.cutShort() && !otherFault && waited > afterDeath) {
        afterDeath = waited;
        afterDeathGap = gap;
      }
      if (!anyFault && !died.cutShort()) {
        quiet = Math.max(quiet, waited);
      }
      if (anyFault && onlyOtherWorkers && !died.cutShort() && waited > waiterFaulted) {
        waiterFaulted = waited;
        waiterFaultedGap = gap;
      }
      i = j;
    }
    return new Liveness(
        TimeUnit.NANOSECONDS.toMillis(overall),
        TimeUnit.NANOSECONDS.toMillis(afterDeath),
        afterDeathGap,
        TimeUnit.NANOSECONDS.toMillis(quiet),
        TimeUnit.NANOSECONDS.toMillis(waiterFaulted),
        waiterFaultedGap);
  }

  /**
   * Whether {@code kind} SIGSTOPs a worker JVM: whatever it was aimed at, a section open in it then
   * (a waiter's JVM may hold the lock in another thread) is cut short.
   */
  private static boolean stops(FaultKind kind) {
    return kind == FaultKind.PAUSE_HOLDER || kind == FaultKind.PAUSE_WAITER;
  }

  /** The acquire failures in [from, to], by exception, as text ("" if none). */
  private static String failuresWithin(List<Failure> failures, long from, long to) {
    Map<String, Integer> byException = new TreeMap<>();
    for (Failure failure : failures) {
      if (failure.at() >= from && failure.at() <= to) {
        byException.merge(failure.exception(), 1, Integer::sum);
      }
    }
    return byException.isEmpty() ? "" : "; acquire failures " + byException;
  }

  /** The length of the part of [from, to] covered by at least one wait. */
  private static long waitingWithin(List<Wait> waits, long from, long to) {
    List<long[]> parts = new ArrayList<>();
    for (Wait wait : waits) {
      long start = Math.max(from, wait.start());
      long end = Math.min(to, wait.end());
      if (start < end) {
        parts.add(new long[] {start, end});
      }
    }
    parts.sort(Comparator.comparingLong(p -> p[0]));
    long covered = 0;
    long reach = from;
    for (long[] part : parts) {
      long start = Math.max(part[0], reach);
      if (part[1] > start) {
        covered += part[1] - start;
        reach = part[1];
      }
    }
    return covered;
  }

  /** The number of values in the sorted array that are at most {@code key}. */
  private static int upperBound(long[] sorted, long key) {
    int index = Arrays.binarySearch(sorted, key);
    if (index < 0) {
      return -index - 1;
    }
    while (index < sorted.length && sorted[index] == key) {
      index++;
    }
    return index;
  }
}
