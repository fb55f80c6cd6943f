package io.latchkey.cli;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the shaded {@code latchkey.jar} (built in the package phase; failsafe passes its path as
 * {@code latchkey.jar}) as a process, as a user would, with a clean environment: no {@code
 * LATCHKEY_URL} unless a test sets it, a UTF-8 locale.
 */
final class Cli {
  static final Duration TIMEOUT = Duration.ofSeconds(90);

  private Cli() {}

  /** What a finished run printed and returned. */
  record Result(int exitCode, String stdout, String stderr, Duration took) {
    /** The run's output, for assertion messages. */
    String describe() {
      return "exit " + exitCode + "\n--- stdout ---\n" + stdout + "--- stderr ---\n" + stderr;
    }
  }

  static Result run(String... args) {
    return run(Map.of(), args);
  }

  static Result run(Map<String, String> environment, String... args) {
    Path output = temporaryFile("stdout");
    Path errors = temporaryFile("stderr");
    long start = System.nanoTime();
    Process process = start(environment, output, errors, args);
    try {
      if (!process.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        kill(process);
        throw new AssertionError("latchkey " + String.join(" ", args) + " did not finish in time");
      }
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      return new Result(
          process.exitValue(),
          Files.readString(output, UTF_8),
          Files.readString(errors, UTF_8),
          took);
    } catch (InterruptedException e) {
      kill(process);
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      deleteQuietly(output);
      deleteQuietly(errors);
    }
  }

  /** Starts latchkey in the background; the caller waits for it and kills it if need be. */
  static Process start(Map<String, String> environment, Path stdout, Path stderr, String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // As ./latchkey runs it.
    command.add("-XX:TieredStopAtLevel=1");
    command.add("-XX:+UseSerialGC");
    command.add("-jar");
    command.add(jar().toString());
    command.addAll(List.of(args));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .redirectOutput(stdout.toFile())
            .redirectError(stderr.toFile());
    builder.environment().remove(BackendOption.ENVIRONMENT_VARIABLE);
    // As a user's shell would be: Java reads the arguments in the locale's encoding.
    builder.environment().put("LC_ALL", "C.UTF-8");
    builder.environment().putAll(environment);
    try {
      return builder.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static Path jar() {
    String jar = System.getProperty("latchkey.jar");
    if (jar == null || !Files.isRegularFile(Path.of(jar))) {
      throw new IllegalStateException(
          "system property latchkey.jar must name the shaded jar (run with mvn verify): " + jar);
    }
    return Path.of(jar);
  }

  /** Kills a process and its descendants, and waits (bounded) until it is gone. */
  static void kill(Process process) {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static Path temporaryFile(String prefix) {
    try {
      return Files.createTempFile("latchkey-cli-it-" + prefix, ".txt");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // A leftover temporary file is harmless.
    }
  }
}
