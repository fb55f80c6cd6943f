package io.latchkey.cli;

import org.jspecify.annotations.Nullable;

/** Where the backend URI comes from: the option, else {@code LATCHKEY_URL}, else the default. */
final class BackendUris {
  static final String ENVIRONMENT_VARIABLE = "LATCHKEY_URL";
  static final String DEFAULT = "memory:";

  private BackendUris() {}

  static String resolve(@Nullable String option) {
    if (option != null && !option.isBlank()) {
      return option;
    }
    String fromEnvironment = System.getenv(ENVIRONMENT_VARIABLE);
    if (fromEnvironment != null && !fromEnvironment.isBlank()) {
      return fromEnvironment;
    }
    return DEFAULT;
  }
}
