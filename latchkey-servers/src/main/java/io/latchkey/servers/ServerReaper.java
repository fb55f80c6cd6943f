package io.latchkey.servers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The last line of defence against leaked {@code redis-server} processes: a JVM shutdown hook that
 * kills every process this package started and has not stopped yet, and deletes their directories.
 *
 * <p>It cannot help when the JVM itself is killed with SIGKILL; normal test runs close their
 * servers, and a JVM that exits without closing them runs the hook.
 */
final class ServerReaper {
  private static final long HOOK_WAIT_MILLIS = 3_000;
  private static final Set<Process> PROCESSES = ConcurrentHashMap.newKeySet();
  private static final Set<Path> DIRECTORIES = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime()
        .addShutdownHook(new Thread(ServerReaper::reapAll, "latchkey-redis-server-reaper"));
  }

  private ServerReaper() {}

  static void track(Process process) {
    PROCESSES.add(process);
  }

  static void untrack(Process process) {
    PROCESSES.remove(process);
  }

  static void trackDirectory(Path directory) {
    DIRECTORIES.add(directory);
  }

  /** Deletes a directory tree and stops tracking it; failures are ignored (best effort). */
  static void deleteDirectory(Path directory) {
    DIRECTORIES.remove(directory);
    deleteRecursively(directory);
  }

  /** Kills a process and its descendants (a forked RDB child, say) with SIGKILL. */
  static void killTree(Process process) {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
  }

  private static void reapAll() {
    List<Process> alive = PROCESSES.stream().filter(Process::isAlive).collect(Collectors.toList());
    alive.forEach(ServerReaper::killTree);
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HOOK_WAIT_MILLIS);
    for (Process process : alive) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        break;
      }
      try {
        process.waitFor(left, TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    DIRECTORIES.forEach(ServerReaper::deleteRecursively);
  }

  /**
   * Deletes a directory tree, best effort (a file that cannot be deleted stays), without tracking.
   */
  static void deleteRecursively(Path directory) {
    if (!Files.exists(directory)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(directory)) {
      paths
          .sorted(Comparator.reverseOrder())
          .forEach(
              path -> {
                try {
                  Files.deleteIfExists(path);
                } catch (IOException ignored) {
                  // Best effort: a leftover temporary file is harmless.
                }
              });
    } catch (IOException | RuntimeException ignored) {
      // Best effort, as above.
    }
  }
}
