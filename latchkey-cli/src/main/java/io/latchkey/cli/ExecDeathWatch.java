package io.latchkey.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * Stops exec's command when exec dies without a chance to do it itself (SIGKILL, the OOM killer, a
 * JVM crash), so that the command never keeps working on a lock that nobody renews any more.
 *
 * <p>Java cannot ask the kernel to signal a child when its parent dies ({@code PR_SET_PDEATHSIG}),
 * and it cannot put a child in a process group of its own. So exec starts, next to the command, a
 * tiny {@code sh} watcher whose standard input is a pipe from exec. The kernel closes that pipe
 * when exec's process ends, however it ends, and the watcher's read returns: with the line {@code
 * done} when exec finished with the command itself, at end-of-file when exec died. Then the watcher
 * collects the command and its descendants from {@code /proc} (they still descend from the command,
 * which was re-parented), sends them exec's {@code --signal}, and SIGKILL a second later to those
 * still there. The command itself keeps the terminal, its process group and its session, as without
 * the watcher.
 *
 * <p>Linux only (it reads {@code /proc}); elsewhere exec runs without it. A descendant that left
 * the tree on purpose (a daemon that double-forked) is not found, as with {@link ProcessTree}.
 */
final class ExecDeathWatch implements AutoCloseable {
  /*
   * $1 is the signal name; the command's pid arrives as the first line on standard input, so that
   * the watcher runs before the command starts. Each /proc/PID/stat gives "pid (comm) state ppid
   * ...", and comm may hold spaces and parentheses: the ppid is read after the last ") ".
   */
  private static final String SCRIPT =
      """
      signal=$1
      IFS= read -r root || exit 0
      [ "$root" = done ] && exit 0
      IFS= read -r word && [ "$word" = done ] && exit 0
      pairs=$(for stat in /proc/[0-9]*/stat; do
        IFS= read -r line < "$stat" 2>/dev/null || continue
        rest=${line##*) }; rest=${rest#* }
        echo "${line%% *} ${rest%% *}"
      done)
      tree=$root; frontier=$root
      while [ -n "$frontier" ]; do
        next=
        for parent in $frontier; do
          next="$next $(echo "$pairs" | while read -r pid ppid; do
            [ "$ppid" = "$parent" ] && echo "$pid"; done)"
        done
        frontier=$(echo $next); tree="$tree $frontier"
      done
      kill -s "$signal" $tree 2>/dev/null
      sleep 1
      kill -s KILL $tree 2>/dev/null
      exit 0
      """;

  private final @Nullable Process watcher;
  private boolean closed;

  private ExecDeathWatch(@Nullable Process watcher) {
    this.watcher = watcher;
  }

  /**
   * Starts a watcher, before the command starts, or none where it cannot work (not Linux).
   *
   * @param signal what the command gets first if exec dies
   * @return the watch; {@link #watch(ProcessHandle)} the command once it runs
   */
  static ExecDeathWatch start(Signal signal) {
    if (!Files.isReadable(Path.of("/proc/self/stat"))) {
      return new ExecDeathWatch(null);
    }
    try {
      Process watcher =
          new ProcessBuilder("sh", "-c", SCRIPT, "latchkey-exec-watch", signal.name())
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      return new ExecDeathWatch(watcher);
    } catch (IOException e) {
      return new ExecDeathWatch(null);
    }
  }

  /** Tells the watcher which process to stop if exec dies. */
  void watch(ProcessHandle command) {
    write(command.pid() + "\n", false);
  }

  /** Exec has finished with the command itself: the watcher exits without touching anything. */
  @Override
  public synchronized void close() {
    write("done\n", true);
  }

  private synchronized void write(String line, boolean last) {
    Process running = watcher;
    if (running == null || closed) {
      return;
    }
    closed = last;
    try {
      OutputStream pipe = running.getOutputStream();
      pipe.write(line.getBytes(StandardCharsets.US_ASCII));
      pipe.flush();
      if (last) {
        pipe.close();
      }
    } catch (IOException e) {
      // The watcher is gone: nothing to tell it.
    }
  }
}
