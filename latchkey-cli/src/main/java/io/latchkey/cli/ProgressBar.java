package io.latchkey.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * A one-line progress bar on standard error, redrawn in place at most every 50 ms; silent when
 * standard error is not a terminal, so that scripted output stays clean.
 *
 * <p>Whether standard error is a terminal: the {@code ./latchkey} launcher tells (with the system
 * property {@value #TERMINAL_PROPERTY}); otherwise, on Linux, where {@code /proc/self/fd/2} points
 * to; elsewhere it is taken not to be.
 */
final class ProgressBar implements AutoCloseable {
  static final String TERMINAL_PROPERTY = "latchkey.stderr.terminal";
  private static final int WIDTH = 30;
  private static final long REDRAW_NANOS = 50_000_000;

  private final PrintStream err;
  private final String label;
  private final long total;
  private final boolean enabled;
  private long lastDrawnAt;
  private boolean drawn;

  private ProgressBar(String label, long total, boolean enabled) {
    this.err = System.err;
    this.label = label;
    this.total = total;
    this.enabled = enabled;
  }

  static ProgressBar forTerminal(String label, long total) {
    return new ProgressBar(label, total, standardErrorIsTerminal());
  }

  private static boolean standardErrorIsTerminal() {
    String told = System.getProperty(TERMINAL_PROPERTY);
    if (told != null) {
      return Boolean.parseBoolean(told);
    }
    try {
      String target = Files.readSymbolicLink(Path.of("/proc/self/fd/2")).toString();
      return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      return false;
    }
  }

  synchronized void update(long done) {
    long now = System.nanoTime();
    if (!enabled || (drawn && now - lastDrawnAt < REDRAW_NANOS && done < total)) {
      return;
    }
    drawn = true;
    lastDrawnAt = now;
    int filled = (int) Math.min(WIDTH, done * WIDTH / Math.max(1, total));
    err.print(
        "\r  "
            + String.format(Locale.ROOT, "%-20s", label)
            + " ["
            + "#".repeat(filled)
            + ".".repeat(WIDTH - filled)
            + "] "
            + done
            + "/"
            + total);
    err.flush();
  }

  @Override
  public synchronized void close() {
    if (enabled && drawn) {
      err.print("\r" + " ".repeat(WIDTH + 60) + "\r");
      err.flush();
    }
  }
}
