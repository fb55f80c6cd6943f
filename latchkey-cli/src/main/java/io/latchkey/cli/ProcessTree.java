package io.latchkey.cli;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A process and its descendants, signalled together: a shell's children and grandchildren get the
 * signal too. The tree is remembered as first seen, because children whose parent died are
 * re-parented and no longer show as descendants.
 */
final class ProcessTree {
  private static final Duration KILL_WAIT = Duration.ofSeconds(5);
  private static final Duration KILL_COMMAND_TIMEOUT = Duration.ofSeconds(5);

  private final ProcessHandle root;
  private final Set<ProcessHandle> members = new LinkedHashSet<>();

  ProcessTree(ProcessHandle root) {
    this.root = root;
  }

  /**
   * Sends {@code signal} to the tree; if it is still alive after {@code grace}, kills it (SIGKILL)
   * and waits at most 5 s more.
   *
   * @return true if the whole tree is gone
   */
  synchronized boolean terminate(Signal signal, Duration grace) throws InterruptedException {
    send(signal);
    if (signal != Signal.KILL && awaitGone(grace)) {
      return true;
    }
    send(Signal.KILL);
    return awaitGone(KILL_WAIT);
  }

  /** Sends a signal to every live member of the tree, the root first. */
  private void send(Signal signal) throws InterruptedException {
    refresh();
    List<ProcessHandle> alive = new ArrayList<>();
    for (ProcessHandle member : members) {
      if (member.isAlive()) {
        alive.add(member);
      }
    }
    if (alive.isEmpty()) {
      return;
    }
    switch (signal) {
      case TERM -> alive.forEach(ProcessHandle::destroy);
      case KILL -> alive.forEach(ProcessHandle::destroyForcibly);
      default -> sendWithKillCommand(signal, alive);
    }
  }

  private void refresh() {
    members.add(root);
    root.descendants().forEach(members::add);
  }

  private boolean awaitGone(Duration timeout) throws InterruptedException {
    CompletableFuture<?>[] exits =
        members.stream().map(ProcessHandle::onExit).toArray(CompletableFuture<?>[]::new);
    try {
      CompletableFuture.allOf(exits).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
      return true;
    } catch (TimeoutException stillAlive) {
      return false;
    } catch (ExecutionException e) {
      throw new IllegalStateException("could not watch the command's processes", e.getCause());
    }
  }

  /** Java can send only TERM and KILL itself; other signals go through {@code kill -s}. */
  private static void sendWithKillCommand(Signal signal, List<ProcessHandle> targets)
      throws InterruptedException {
    List<String> command = new ArrayList<>(List.of("kill", "-s", signal.name()));
    for (ProcessHandle target : targets) {
      command.add(Long.toString(target.pid()));
    }
    try {
      Process kill =
          new ProcessBuilder(command)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!kill.waitFor(KILL_COMMAND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        kill.destroyForcibly();
        throw new IllegalStateException("'kill -s " + signal.name() + "' did not finish in time");
      }
    } catch (IOException e) {
      throw new IllegalStateException(
          "cannot run 'kill -s " + signal.name() + "': " + e.getMessage(), e);
    }
  }
}
