package io.latchkey.testkit.faults;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * What happened in one fault run, as the workers printed it and the injector did it: critical
 * sections, waits, faults. Times are {@link System#nanoTime()} values of one host. A holder is one
 * thread of one worker JVM: sections and waits are kept per thread, faults per worker (a signal or
 * a proxy strikes every thread of it). Thread-safe: the workers' reader threads and the injector
 * add to it while the run goes on.
 */
final class History {
  /** How a critical section ended, as far as the harness knows. */
  enum End {
    /** The worker printed {@code EXIT}. */
    EXIT,
    /** The worker was killed inside it. */
    KILLED,
    /** The run ended with the worker still inside (it never came out). */
    RUN_END
  }

  /** One grant: from the moment the holder held it until it stopped using the resource. */
  static final class Section {
    final int worker;
    final int thread;
    final long token;
    final long enter;
    final long plannedHoldMillis;
    long end = Long.MAX_VALUE;
    End endedBy = End.RUN_END;
    @Nullable Long lostAt;
    @Nullable Boolean validAtExit;
    @Nullable String release;

    Section(int worker, int thread, long token, long enter, long plannedHoldMillis) {
      this.worker = worker;
      this.thread = thread;
      this.token = token;
      this.enter = enter;
      this.plannedHoldMillis = plannedHoldMillis;
    }

    /** Whether its holder is the same thread of the same worker as {@code other}'s. */
    boolean sameHolder(Section other) {
      return worker == other.worker && thread == other.thread;
    }

    /** Whether the holder was told it lost the lease, in any of the three ways. */
    boolean told() {
      return lostAt != null || Boolean.FALSE.equals(validAtExit) || "LOST".equals(release);
    }

    @Override
    public String toString() {
      return "worker "
          + worker
          + "#"
          + thread
          + " token "
          + token
          + " ["
          + enter
          + ", "
          + (end == Long.MAX_VALUE ? "open" : end)
          + "] "
          + endedBy
          + (lostAt == null ? "" : " onLost@" + lostAt)
          + " validAtExit="
          + validAtExit
          + " release="
          + release;
    }
  }

  /** An acquire call, from its start until it returned or failed (or the worker died). */
  record Wait(int worker, long start, long end) {}

  /** An acquire call that threw. */
  record Failure(int worker, long at, String exception) {}

  /**
   * A fault the injector applied.
   *
   * @param worker the worker it targeted, or -1 for the server
   * @param inSection whether that worker was inside a critical section when it began
   */
  record Fault(FaultKind kind, int worker, boolean inSection, long start, long end) {}

  /** What one thread of one worker is doing now. */
  private static final class HolderState {
    final int worker;
    @Nullable Long waitingSince;
    @Nullable Section open;
    final Map<Long, Section> byToken = new HashMap<>();

    HolderState(int worker) {
      this.worker = worker;
    }
  }

  /** A thread of a worker. */
  private record Holder(int worker, int thread) {}

  private static final Pattern THREAD = Pattern.compile("#(\\d+)");

  private final Map<Holder, HolderState> holders = new HashMap<>();
  private final List<Section> sections = new ArrayList<>();
  private final List<Wait> waits = new ArrayList<>();
  private final List<Failure> failures = new ArrayList<>();
  private final List<Fault> faults = new ArrayList<>();
  private final Map<String, Integer> acquireFailures = new TreeMap<>();
  private final Map<String, Integer> releaseOutcomes = new TreeMap<>();
  private final List<String> errors = new ArrayList<>();

  /**
   * Reads one line a worker printed (see {@link FaultWorker}); a line without a {@code #thread}
   * word first is thread 0's.
   */
  synchronized void record(int worker, String line) {
    String[] word = line.trim().split(" ", -1);
    int thread = 0;
    Matcher named = THREAD.matcher(word[0]);
    if (named.matches()) {
      thread = Integer.parseInt(named.group(1));
      word = Arrays.copyOfRange(word, 1, word.length);
    }
    HolderState state =
        holders.computeIfAbsent(new Holder(worker, thread), h -> new HolderState(worker));
    try {
      switch (word[0]) {
        case "WAIT" -> {
          state.waitingSince = Long.parseLong(word[1]);
          notifyAll();
        }
        case "ENTER" -> {
          long at = Long.parseLong(word[1]);
          endWait(worker, state, at);
          long planned = word.length > 3 ? Long.parseLong(word[3]) : 0;
          Section section = new Section(worker, thread, Long.parseLong(word[2]), at, planned);
          state.open = section;
          state.byToken.put(section.token, section);
          sections.add(section);
          notifyAll();
        }
        case "FAILED" -> {
          endWait(worker, state, Long.parseLong(word[1]));
          acquireFailures.merge(word[2], 1, Integer::sum);
          failures.add(new Failure(worker, Long.parseLong(word[1]), word[2]));
        }
        case "LOST" -> {
          Section section = state.byToken.get(Long.parseLong(word[2]));
          if (section != null && section.lostAt == null) {
            section.lostAt = Long.parseLong(word[1]);
          }
        }
        case "EXIT" -> {
          Section section = state.byToken.get(Long.parseLong(word[2]));
          if (section != null) {
            section.end = Long.parseLong(word[1]);
            section.endedBy = End.EXIT;
            section.validAtExit = Boolean.parseBoolean(word[3]);
          }
          state.open = null;
        }
        case "RELEASED" -> {
          Section section = state.byToken.get(Long.parseLong(word[2]));
          if (section != null) {
            section.release = word[3];
          }
          releaseOutcomes.merge(word[3], 1, Integer::sum);
        }
        case "ERROR" -> errors.add("worker " + worker + ": " + line);
        default -> {
          // READY, WRITE (the store keeps its own record), STOPPED.
        }
      }
    } catch (RuntimeException e) {
      errors.add("worker " + worker + " printed an unreadable line: " + line);
    }
  }

  private void endWait(int worker, HolderState state, long at) {
    Long since = state.waitingSince;
    if (since != null) {
      waits.add(new Wait(worker, since, at));
      state.waitingSince = null;
    }
  }

  /** A worker was killed at {@code at}: the open sections and waits of its threads end there. */
  synchronized void killed(int worker, long at) {
    for (HolderState state : holders.values()) {
      if (state.worker != worker) {
        continue;
      }
      Section open = state.open;
      if (open != null) {
        open.end = Math.max(open.enter, at);
        open.endedBy = End.KILLED;
        state.open = null;
      }
      endWait(worker, state, at);
    }
  }

  /** The run ended at {@code at}: whatever is still open ends there. */
  synchronized void runEnded(long at) {
    for (HolderState state : holders.values()) {
      Section open = state.open;
      if (open != null) {
        open.end = Math.max(open.enter, at);
        state.open = null;
      }
      endWait(state.worker, state, at);
    }
  }

  synchronized void fault(Fault fault) {
    faults.add(fault);
  }

  /**
   * Waits until a thread of {@code worker} enters a critical section it plans to hold at least
   * {@code minHoldMillis}, after any it entered before this call.
   *
   * @return whether it did within the timeout
   */
  synchronized boolean awaitEnter(int worker, long minHoldMillis, long timeoutNanos)
      throws InterruptedException {
    int seen = sections.size();
    long deadline = System.nanoTime() + timeoutNanos;
    while (true) {
      for (int i = seen; i < sections.size(); i++) {
        Section section = sections.get(i);
        if (section.worker == worker && section.plannedHoldMillis >= minHoldMillis) {
          return true;
        }
      }
      seen = sections.size();
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
  }

  /**
   * Waits until a thread of {@code worker} is in an acquire call.
   *
   * @return whether one was within the timeout
   */
  synchronized boolean awaitWaiting(int worker, long timeoutNanos) throws InterruptedException {
    long deadline = System.nanoTime() + timeoutNanos;
    while (true) {
      if (holders.values().stream()
          .anyMatch(state -> state.worker == worker && state.waitingSince != null)) {
        return true;
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
  }

  /** Whether a thread of {@code worker} is inside a critical section. */
  synchronized boolean inSection(int worker) {
    return holders.values().stream()
        .anyMatch(state -> state.worker == worker && state.open != null);
  }

  synchronized List<Section> sections() {
    return List.copyOf(sections);
  }

  synchronized List<Failure> failures() {
    return List.copyOf(failures);
  }

  synchronized List<Wait> waits() {
    return List.copyOf(waits);
  }

  synchronized List<Fault> faults() {
    return List.copyOf(faults);
  }

  synchronized Map<String, Integer> acquireFailures() {
    return Map.copyOf(acquireFailures);
  }

  synchronized Map<String, Integer> releaseOutcomes() {
    return Map.copyOf(releaseOutcomes);
  }

  synchronized List<String> errors() {
    return List.copyOf(errors);
  }
}
