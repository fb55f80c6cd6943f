package io.latchkey.testkit.process;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A worker JVM's side of its link with the test JVM that started it through {@link WorkerJvm}:
 * {@code key=value} arguments in, command lines on standard input, one event per line on standard
 * output, and an exit when the test JVM goes away.
 */
public final class WorkerChannel {
  private final Map<String, String> args;

  private WorkerChannel(Map<String, String> args) {
    this.args = args;
  }

  /**
   * Reads {@code key=value} arguments.
   *
   * @param argv the arguments of {@code main}
   * @return the parsed arguments
   * @throws IllegalArgumentException if one is not {@code key=value}
   */
  public static WorkerChannel parse(String[] argv) {
    Map<String, String> args = new HashMap<>();
    for (String arg : argv) {
      int eq = arg.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("argument is not key=value: " + arg);
      }
      args.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    return new WorkerChannel(args);
  }

  /**
   * @param key the argument's name
   * @return its value
   * @throws IllegalArgumentException if it is missing or blank
   */
  public String required(String key) {
    String value = args.get(key);
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException("missing argument " + key + "=");
    }
    return value;
  }

  /**
   * @param key the argument's name
   * @return its value, or null if missing
   */
  public @Nullable String optional(String key) {
    return args.get(key);
  }

  /**
   * @param key the argument's name
   * @param fallback the value if it is missing
   * @return its value as a number
   */
  public long number(String key, long fallback) {
    String value = args.get(key);
    return value == null ? fallback : Long.parseLong(value);
  }

  /**
   * Reads standard input on a daemon thread, handing each trimmed line to {@code onCommand}; when
   * the input ends (the test JVM is gone), the worker exits with status 3, so that a crashed test
   * leaves no process behind.
   *
   * @param onCommand called with every line
   */
  public static void watchStandardInput(Consumer<String> onCommand) {
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                  onCommand.accept(line.trim());
                }
              } catch (IOException e) {
                // Treated as the end of input.
              }
              System.exit(3);
            },
            "worker-stdin");
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * Prints one line to standard output and flushes it, atomically with respect to other lines.
   *
   * @param line the event
   */
  public static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  /**
   * Reports a failure as {@code ERROR <message>} (and the stack trace on standard error) and exits
   * with status 1.
   *
   * @param failure what went wrong
   */
  public static void fail(Throwable failure) {
    failure.printStackTrace();
    say("ERROR " + String.valueOf(failure).replace('\n', ' '));
    System.exit(1);
  }
}
