package io.latchkey.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** A plain-text table with columns sized to their widest cell. */
final class Table {
  private final List<String[]> rows = new ArrayList<>();
  private final int columns;

  Table(String... header) {
    this.columns = header.length;
    rows.add(header);
  }

  void row(String... cells) {
    if (cells.length != columns) {
      throw new IllegalArgumentException("a row needs " + columns + " cells, got " + cells.length);
    }
    rows.add(cells);
  }

  /**
   * @return the number of rows below the header
   */
  int rows() {
    return rows.size() - 1;
  }

  void print(PrintWriter out) {
    int[] widths = new int[columns];
    for (String[] row : rows) {
      for (int i = 0; i < columns; i++) {
        widths[i] = Math.max(widths[i], row[i].length());
      }
    }
    for (String[] row : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < columns; i++) {
        if (i > 0) {
          line.append("  ");
        }
        line.append(row[i]);
        line.append(" ".repeat(widths[i] - row[i].length()));
      }
      out.println(line.toString().stripTrailing());
    }
  }

  static String millis(long nanos) {
    return String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
  }
}
