package io.latchkey.cli;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code --backend URI} option of every command, and how the command line connects: the option,
 * else the {@code LATCHKEY_URL} environment variable; every backend operation bounded by {@value
 * #OPERATION_TIMEOUT_SECONDS} s so that an unreachable server fails fast.
 */
final class BackendOption {
  static final String ENVIRONMENT_VARIABLE = "LATCHKEY_URL";
  static final int OPERATION_TIMEOUT_SECONDS = 3;

  @Spec(Spec.Target.MIXEE)
  CommandSpec command;

  @Option(
      names = "--backend",
      paramLabel = "URI",
      description =
          "The lock service, e.g. redis://localhost:6379, jdbc:postgresql://db/app,"
              + " jdbc:mariadb://db/app, zookeeper://zk:2181 (default: $LATCHKEY_URL).")
  @Nullable String uri;

  /**
   * @return the URI given by the option or the environment, if any
   */
  Optional<String> given() {
    if (uri != null && !uri.isBlank()) {
      return Optional.of(uri.strip());
    }
    String fromEnvironment = System.getenv(ENVIRONMENT_VARIABLE);
    if (fromEnvironment != null && !fromEnvironment.isBlank()) {
      return Optional.of(fromEnvironment.strip());
    }
    return Optional.empty();
  }

  /**
   * @return the URI of a backend that other processes share
   * @throws ParameterException if none is given, or the in-process {@code memory:} backend is
   */
  String shared() {
    String given =
        given()
            .orElseThrow(
                () ->
                    new ParameterException(
                        command.commandLine(),
                        "no backend: give --backend URI or set "
                            + ENVIRONMENT_VARIABLE
                            + ", e.g. redis://localhost:6379"));
    if (DemoServer.named(given).isPresent()) {
      throw new ParameterException(
          command.commandLine(),
          "'"
              + given
              + "' names a server that only the demo starts for itself: give the URI of a"
              + " running one, e.g. redis://localhost:6379 or jdbc:postgresql://db/app");
    }
    if (isInProcess(given)) {
      throw new ParameterException(
          command.commandLine(),
          "'"
              + given
              + "' is an in-process backend, which no other process can see: give a shared one,"
              + " e.g. redis://localhost:6379");
    }
    return given;
  }

  /**
   * @return true for the backends that live in this process alone: {@code memory:} and an H2
   *     in-memory database ({@code jdbc:h2:mem:})
   */
  static boolean isInProcess(String uri) {
    String lower = uri.toLowerCase(Locale.ROOT);
    return lower.startsWith("memory:") || lower.startsWith("jdbc:h2:mem:");
  }

  /**
   * @return the settings of the command line's clients, for further changes
   */
  static LatchkeyOptions.Builder options() {
    return LatchkeyOptions.builder()
        .operationTimeout(Duration.ofSeconds(OPERATION_TIMEOUT_SECONDS));
  }

  static Latchkey connect(String uri) {
    return Latchkey.connect(uri, options().build());
  }
}
