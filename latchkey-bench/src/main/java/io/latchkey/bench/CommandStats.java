package io.latchkey.bench;

import io.latchkey.servers.RedisTestServer;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * A reading of Redis's {@code INFO commandstats}: calls and server microseconds per command name
 * ({@code evalsha}, {@code client|setinfo}, ...), since the last {@code CONFIG RESETSTAT}.
 *
 * <p>Redis counts every command it executes, including those that a script runs with {@code
 * redis.call} (and {@code INFO stats total_commands_processed} does too). So the totals mix two
 * things: the commands clients send (each one a round trip: EVALSHA, EVAL, SUBSCRIBE, ...) and the
 * commands run inside those scripts (HGETALL, HSET, PEXPIRE, TIME, PUBLISH, ...). {@link
 * #clientOnly()} keeps the commands that only a client can send (a script cannot call EVALSHA or
 * SUBSCRIBE); a command such as DEL or PUBLISH may come from either, which only {@link
 * MonitorTally} tells apart.
 */
record CommandStats(Map<String, Totals> byCommand) {
  /** Calls of one command and the server time they took. */
  record Totals(long calls, long usec) {}

  /** What the benchmark harness itself sends, through {@link RedisTestServer#command}. */
  private static final Set<String> HARNESS = Set.of("config|resetstat", "info", "echo");

  /** Commands only a client can send: a script cannot call them. */
  private static final Set<String> CLIENT_ONLY =
      Set.of(
          "eval",
          "evalsha",
          "eval_ro",
          "evalsha_ro",
          "fcall",
          "fcall_ro",
          "subscribe",
          "unsubscribe",
          "psubscribe",
          "punsubscribe",
          "ssubscribe",
          "sunsubscribe",
          "ping",
          "hello",
          "auth",
          "select",
          "quit",
          "reset",
          "readonly",
          "multi",
          "exec",
          "discard",
          "watch",
          "unwatch",
          "wait");

  private static final Set<String> CLIENT_ONLY_FAMILIES =
      Set.of("client|", "script|", "command|", "cluster|", "config|", "function|");

  CommandStats {
    byCommand = Map.copyOf(byCommand);
  }

  /**
   * Reads {@code INFO commandstats}, leaving out what the harness itself sent ({@code CONFIG
   * RESETSTAT}, {@code INFO}, {@code ECHO}; neither library sends them).
   */
  static CommandStats read(RedisTestServer server) {
    Map<String, Totals> parsed = new TreeMap<>();
    for (Map.Entry<String, String> field : server.info("commandstats").entrySet()) {
      if (!field.getKey().startsWith("cmdstat_")) {
        continue;
      }
      String command = field.getKey().substring("cmdstat_".length()).toLowerCase(Locale.ROOT);
      if (HARNESS.contains(command)) {
        continue;
      }
      long calls = 0;
      long usec = 0;
      for (String part : field.getValue().split(",", -1)) {
        int equals = part.indexOf('=');
        String key = part.substring(0, equals);
        if (key.equals("calls")) {
          calls = Long.parseLong(part.substring(equals + 1));
        } else if (key.equals("usec")) {
          usec = Long.parseLong(part.substring(equals + 1));
        }
      }
      parsed.put(command, new Totals(calls, usec));
    }
    return new CommandStats(parsed);
  }

  /** Tells whether a command is one that only a client can send (a round trip of its own). */
  static boolean isClientOnly(String command) {
    return CLIENT_ONLY.contains(command)
        || CLIENT_ONLY_FAMILIES.stream().anyMatch(command::startsWith);
  }

  /** The commands that only clients can send: each is a round trip. */
  CommandStats clientOnly() {
    return filter(CommandStats::isClientOnly);
  }

  /** Calls of one command, 0 if none. */
  long calls(String command) {
    Totals totals = byCommand.get(command);
    return totals == null ? 0 : totals.calls();
  }

  /** Calls of all commands. */
  long totalCalls() {
    return byCommand.values().stream().mapToLong(Totals::calls).sum();
  }

  /** Server microseconds of one command, 0 if none. */
  long usec(String command) {
    Totals totals = byCommand.get(command);
    return totals == null ? 0 : totals.usec();
  }

  /** Calls by command. */
  Map<String, Long> calls() {
    Map<String, Long> calls = new TreeMap<>();
    byCommand.forEach((command, totals) -> calls.put(command, totals.calls()));
    return calls;
  }

  /**
   * The calls per unit, for example per acquire+release cycle: {@code EVALSHA 2.00, SUBSCRIBE
   * 0.01}, most frequent first, those below 0.005 per unit left out.
   */
  String perUnit(double units) {
    return perUnit(calls(), units);
  }

  /** Like {@link #perUnit(double)}, for counts by command from elsewhere. */
  static String perUnit(Map<String, Long> calls, double units) {
    StringBuilder text = new StringBuilder();
    calls.entrySet().stream()
        .sorted((a, b) -> Long.compare(b.getValue(), a.getValue()))
        .forEach(
            entry -> {
              double each = entry.getValue() / units;
              if (each >= 0.005) {
                if (text.length() > 0) {
                  text.append(", ");
                }
                text.append(entry.getKey().toUpperCase(Locale.ROOT))
                    .append(' ')
                    .append(String.format(Locale.ROOT, each >= 100 ? "%,.0f" : "%.2f", each));
              }
            });
    return text.length() == 0 ? "-" : text.toString();
  }

  private CommandStats filter(Predicate<String> keep) {
    Map<String, Totals> kept = new TreeMap<>();
    byCommand.forEach(
        (command, totals) -> {
          if (keep.test(command)) {
            kept.put(command, totals);
          }
        });
    return new CommandStats(kept);
  }
}
