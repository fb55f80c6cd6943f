package io.latchkey.cli;

import java.io.PrintStream;

/**
 * A one-line progress bar on standard error, redrawn in place; silent when standard error is not a
 * terminal, so that scripted output stays clean.
 */
final class ProgressBar implements AutoCloseable {
  private static final int WIDTH = 30;

  private final PrintStream err;
  private final String label;
  private final long total;
  private final boolean enabled;
  private long lastDrawn = -1;

  private ProgressBar(String label, long total, boolean enabled) {
    this.err = System.err;
    this.label = label;
    this.total = total;
    this.enabled = enabled;
  }

  static ProgressBar forTerminal(String label, long total) {
    return new ProgressBar(label, total, System.console() != null);
  }

  synchronized void update(long done) {
    if (!enabled || done == lastDrawn) {
      return;
    }
    lastDrawn = done;
    int filled = (int) Math.min(WIDTH, done * WIDTH / Math.max(1, total));
    err.print(
        "\r  "
            + String.format("%-20s", label)
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
    if (enabled && lastDrawn >= 0) {
      err.print("\r" + " ".repeat(WIDTH + 60) + "\r");
      err.flush();
    }
  }
}
