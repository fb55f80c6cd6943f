package io.latchkey.bench;

import io.latchkey.servers.MariaDbTestServer;
import io.latchkey.servers.PostgresTestServer;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
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
 * log: statement logging is switched on around a run of cycles of one library alone, and the lines
 * the server logged meanwhile are counted by their first keyword. Only for a server the benchmark
 * started. PostgreSQL: {@code log_statement = 'all'} (by {@code ALTER SYSTEM} and a reload); a
 * pooled connection that was idle when the setting changed logs its first statement after it under
 * the old setting, so up to one statement per connection may go uncounted (a few in a thousand
 * here). Statements are not round trips: pgjdbc sends a transaction's {@code BEGIN} with its first
 * statement. MariaDB: the general query log ({@code SET GLOBAL general_log}), which every
 * connection follows at once; it logs what the driver sends, {@code SET autocommit} and {@code
 * COMMIT} included.
 */
final class StatementCounts {
  // "LOG:  statement: SELECT ..." (simple protocol) or "LOG:  execute S_1: SELECT ..." (extended).
  private static final Pattern POSTGRES_LOGGED =
      Pattern.compile("LOG:  (?:statement|execute [^:]*): +(\\w+)");
  // "[date time]\t    12 Query\tSELECT ...": the switch's own statement is left out.
  private static final Pattern MARIADB_LOGGED =
      Pattern.compile("\\s\\d+ (?:Query|Execute)\\t+(?!SET GLOBAL general_log)(\\w+)");

  /** A server's statement log: how to switch it on and off, where it is, what a statement is. */
  interface Log {
    void on() throws Exception;

    void off() throws Exception;

    Path file();

    Pattern statement();

    /** What the report's heading says of the log. */
    String describe();
  }

  /** PostgreSQL's server log with {@code log_statement = 'all'}. */
  static Log postgres(PostgresTestServer server) {
    return new Log() {
      @Override
      public void on() throws Exception {
        setLogStatement(server, "all");
      }

      @Override
      public void off() throws Exception {
        setLogStatement(server, null);
      }

      @Override
      public Path file() {
        return server.logFile();
      }

      @Override
      public Pattern statement() {
        return POSTGRES_LOGGED;
      }

      @Override
      public String describe() {
        return "the server's log, log_statement = 'all'";
      }
    };
  }

  /** MariaDB's general query log, in a file of the server's directory. */
  static Log mariaDb(MariaDbTestServer server) throws SQLException {
    Path file = server.directory().resolve("general.log");
    execute(
        server.jdbcUrl(),
        "SET GLOBAL log_output = 'FILE'",
        "SET GLOBAL general_log_file = '" + file + "'");
    return new Log() {
      @Override
      public void on() throws SQLException {
        execute(server.jdbcUrl(), "SET GLOBAL general_log = ON");
      }

      @Override
      public void off() throws SQLException {
        execute(server.jdbcUrl(), "SET GLOBAL general_log = OFF");
      }

      @Override
      public Path file() {
        return file;
      }

      @Override
      public Pattern statement() {
        return MARIADB_LOGGED;
      }

      @Override
      public String describe() {
        return "the server's general query log";
      }
    };
  }

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
   * @param server the log of a server started by the benchmark
   * @param cycle one library's cycle, run once before to create its rows
   */
  static Counted count(Log server, LockClients.Cycle cycle, int cycles) throws Exception {
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
    private final Log server;
    private long from;
    private long to;

    Window(Log server) {
      this.server = server;
    }

    @Override
    public void start() throws Exception {
      server.on();
      from = length(server);
    }

    @Override
    public void stop() throws Exception {
      // PostgreSQL logs a statement before it runs it: every counted cycle's lines are there.
      // MariaDB's log is written by then too; switching it off (not counted) flushes it.
      server.off();
      to = length(server);
    }

    /** What was logged in the window, per cycle. */
    Counted counted(long cycles) throws IOException {
      return parse(read(server, from, to), server.statement(), cycles);
    }
  }

  private static Counted parse(String log, Pattern statement, long cycles) {
    Map<String, Long> counts = new TreeMap<>();
    long total = 0;
    Matcher matcher = statement.matcher(log);
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

  private static void execute(String url, String... statements) throws SQLException {
    try (Connection connection = DriverManager.getConnection(url);
        Statement statement = connection.createStatement()) {
      for (String sql : statements) {
        statement.execute(sql);
      }
    }
  }

  private static long length(Log server) {
    return server.file().toFile().length();
  }

  private static String read(Log server, long from, long to) throws IOException {
    try (RandomAccessFile file = new RandomAccessFile(server.file().toFile(), "r")) {
      byte[] bytes = new byte[(int) (to - from)];
      file.seek(from);
      file.readFully(bytes);
      return new String(bytes, StandardCharsets.UTF_8);
    }
  }
}
