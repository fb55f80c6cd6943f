package io.latchkey.bench;

import io.latchkey.servers.PostgresTestServer;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The SQL statements a lock library sends per acquire+release cycle, counted from the server's own
 * log: {@code log_statement = 'all'} is switched on (by {@code ALTER SYSTEM} and a reload) around a
 * run of cycles of one library alone, and the lines the server logged meanwhile are counted by
 * their first keyword. Only for a server the benchmark started. A pooled connection that was idle
 * when the setting changed logs its first statement after it under the old setting, so up to one
 * statement per connection may go uncounted (a few in a thousand here). Statements are not round
 * trips: pgjdbc sends a transaction's {@code BEGIN} with its first statement.
 */
final class StatementCounts {
  // "LOG:  statement: SELECT ..." (simple protocol) or "LOG:  execute S_1: SELECT ..." (extended).
  private static final Pattern LOGGED =
      Pattern.compile("LOG:  (?:statement|execute [^:]*): +(\\w+)");

  private StatementCounts() {}

  /** Statements per cycle, in all and by first keyword. */
  record Counted(double perCycle, Map<String, Double> byKeyword) {
    String breakdown() {
      return byKeyword.entrySet().stream()
          .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
          .map(e -> String.format(Locale.ROOT, "%s %.2f", e.getKey(), e.getValue()))
          .collect(Collectors.joining(", "));
    }
  }

  /**
   * Runs {@code cycles} cycles with statement logging on and counts what the server logged.
   *
   * @param server the server, started by the benchmark
   * @param cycle one library's cycle, run once before to create its rows
   */
  static Counted count(PostgresTestServer server, LockClients.Cycle cycle, int cycles)
      throws Exception {
    cycle.run();
    Window window = new Window(server);
    window.start();
    for (int i = 0; i < cycles; i++) {
      cycle.run();
    }
    window.stop();
    return window.counted(cycles);
  }

  /** Statement logging on for a {@link ContendedWindow}'s window, and the count of it. */
  static final class Window implements ContendedWindow.Probe {
    private final PostgresTestServer server;
    private long from;
    private long to;

    Window(PostgresTestServer server) {
      this.server = server;
    }

    @Override
    public void start() throws Exception {
      setLogStatement(server, "all");
      from = length(server);
    }

    @Override
    public void stop() throws Exception {
      // The server logs a statement before it runs it: every counted cycle's lines are there.
      to = length(server);
      setLogStatement(server, null);
    }

    /** What was logged in the window, per cycle. */
    Counted counted(long cycles) throws IOException {
      return parse(read(server, from, to), cycles);
    }
  }

  private static Counted parse(String log, long cycles) {
    Map<String, Long> counts = new TreeMap<>();
    long total = 0;
    Matcher matcher = LOGGED.matcher(log);
    while (matcher.find()) {
      counts.merge(matcher.group(1).toUpperCase(Locale.ROOT), 1L, Long::sum);
      total++;
    }
    Map<String, Double> perCycle = new TreeMap<>();
    counts.forEach((keyword, count) -> perCycle.put(keyword, count / (double) cycles));
    return new Counted(total / (double) cycles, perCycle);
  }

  private static void setLogStatement(PostgresTestServer server, @Nullable String value)
      throws SQLException, InterruptedException {
    try (Connection connection = DriverManager.getConnection(server.jdbcUrl());
        Statement statement = connection.createStatement()) {
      statement.execute(
          value == null
              ? "ALTER SYSTEM RESET log_statement"
              : "ALTER SYSTEM SET log_statement = '" + value + "'");
      statement.execute("SELECT pg_reload_conf()");
    }
    // The postmaster signals the backends; give them a moment to take it.
    Thread.sleep(200);
  }

  private static long length(PostgresTestServer server) throws IOException {
    return server.logFile().toFile().length();
  }

  private static String read(PostgresTestServer server, long from, long to) throws IOException {
    try (RandomAccessFile file = new RandomAccessFile(server.logFile().toFile(), "r")) {
      byte[] bytes = new byte[(int) (to - from)];
      file.seek(from);
      file.readFully(bytes);
      return new String(bytes, StandardCharsets.UTF_8);
    }
  }
}
