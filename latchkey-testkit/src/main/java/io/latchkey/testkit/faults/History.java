package io.latchkey.testkit.faults;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * What happened in one fault run, as the workers printed it and the injector did it: critical
 * sections, waits, faults. Times are {@link System#nanoTime()} values of one host. Thread-safe: the
 * workers' reader threads and the injector add to it while the run goes on.
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

  /** One grant: from the moment the worker held it until it stopped using the resource. */
  static final class Section {
    final int worker;
    final long token;
    final long enter;
    final long plannedHoldMillis;
    long end = Long.MAX_VALUE;
    End endedBy = End.RUN_END;
    @Nullable Long lostAt;
    @Nullable Boolean validAtExit;
    @Nullable String release;

    Section(int worker, long token, long enter, long plannedHoldMillis) {
      this.worker = worker;
      this.token = token;
      this.enter = enter;
      this.plannedHoldMillis = plannedHoldMillis;
    }

    /** Whether the worker was told it lost the lease, in any of the three ways. */
    boolean told() {
      return lostAt != null || Boolean.FALSE.equals(validAtExit) || "LOST".equals(release);
    }

    @Override
    public String toString() {
      return "worker "
          + worker
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

  /** What one worker is doing now. */
  private static final class WorkerState {
    @Nullable Long waitingSince;
    @Nullable Section open;
    final Map<Long, Section> byToken = new HashMap<>();
  }

  private final Map<Integer, WorkerState> workers = new HashMap<>();
  private final List<Section> sections = new ArrayList<>();
  private final List<Wait> waits = new ArrayList<>();
  private final List<Failure> failures = new ArrayList<>();
  private final List<Fault> faults = new ArrayList<>();
  private final Map<String, Integer> acquireFailures = new TreeMap<>();
  private final Map<String, Integer> releaseOutcomes = new TreeMap<>();
  private final List<String> errors = new ArrayList<>();

  /** Reads one line a worker printed (see {@link FaultWorker}). */
  synchronized void record(int worker, String line) {
    String[] word = line.trim().split(" ", -1);
    WorkerState state = workers.computeIfAbsent(worker, w -> new WorkerState());
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
          Section section = new Section(worker, Long.parseLong(word[2]), at, planned);
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

  private void endWait(int worker, WorkerState state, long at) {
    Long since = state.waitingSince;
    if (since != null) {
      waits.add(new Wait(worker, since, at));
      state.waitingSince = null;
    }
  }

  /** A worker was killed at {@code at}: its open section and wait end there. */
  synchronized void killed(int worker, long at) {
    WorkerState state = workers.computeIfAbsent(worker, w -> new WorkerState());
    Section open = state.open;
    if (open != null) {
      open.end = Math.max(open.enter, at);
      open.endedBy = End.KILLED;
      state.open = null;
    }
    endWait(worker, state, at);
  }

  /** The run ended at {@code at}: whatever is still open ends there. */
  synchronized void runEnded(long at) {
    workers.forEach(
        (worker, state) -> {
          Section open = state.open;
          if (open != null) {
            open.end = Math.max(open.enter, at);
            state.open = null;
          }
          endWait(worker, state, at);
        });
  }

  synchronized void fault(Fault fault) {
    faults.add(fault);
  }

  /**
   * Waits until {@code worker} enters a critical section it plans to hold at least {@code
   * minHoldMillis}, after any it entered before this call.
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
   * Waits until {@code worker} is in an acquire call.
   *
   * @return whether it was within the timeout
   */
  synchronized boolean awaitWaiting(int worker, long timeoutNanos) throws InterruptedException {
    long deadline = System.nanoTime() + timeoutNanos;
    while (true) {
      WorkerState state = workers.get(worker);
      if (state != null && state.waitingSince != null) {
        return true;
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
  }

  synchronized boolean inSection(int worker) {
    WorkerState state = workers.get(worker);
    return state != null && state.open != null;
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
