package io.latchkey.testkit;

import io.latchkey.Feature;
import io.latchkey.spi.BackendFactory;
import java.util.Optional;
import java.util.Set;

/**
 * What a backend module gives the conformance kit: a way to open connections to one running lock
 * service, and what that service declares it can do.
 */
public interface BackendFixture {
  /**
   * @return a short name for reports, e.g. {@code redis-standalone}
   */
  String name();

  /**
   * @return opens a new connection to the same lock service each time; clients opened on separate
   *     connections contend as separate processes would
   */
  BackendFactory backend();

  /**
   * @return the features the backend must declare; the kit checks that it declares exactly these
   */
  Set<Feature> features();

  /**
   * @return a URI that another JVM can pass to {@link io.latchkey.Latchkey#connect(String)} to
   *     reach the same lock service, or empty if the service lives only in this JVM
   */
  default Optional<String> uri() {
    return Optional.empty();
  }
}
