package io.latchkey.jdbc;

import io.latchkey.Feature;
import io.latchkey.spi.BackendFactory;
import io.latchkey.testkit.BackendFixture;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.sql.DriverManager;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * The conformance kit's view of a database that a test class started, in table, advisory or row
 * mode.
 */
final class JdbcFixtures {
  private JdbcFixtures() {}

  /**
   * @param name the fixture's name in reports
   * @param uri the latchkey URI of the database, read when a client opens
   * @param pushesWakeups whether the database pushes wake-ups (PostgreSQL)
   * @return a fixture reachable from worker JVMs by its URI
   */
  static BackendFixture tableMode(String name, Supplier<String> uri, boolean pushesWakeups) {
    return fixture(name, uri, TableBackend.features(pushesWakeups));
  }

  /**
   * @param name the fixture's name in reports
   * @param uri the latchkey URI of the database in advisory mode, read when a client opens
   * @param dialect the database
   * @return a fixture reachable from worker JVMs by its URI
   */
  static BackendFixture advisoryMode(String name, Supplier<String> uri, SqlDialect dialect) {
    return fixture(name, uri, ConnectionBoundBackend.features(JdbcMode.ADVISORY, dialect));
  }

  /**
   * @param name the fixture's name in reports
   * @param uri the latchkey URI of the database in row mode, read when a client opens
   * @param dialect the database
   * @return a fixture reachable from worker JVMs by its URI
   */
  static BackendFixture rowMode(String name, Supplier<String> uri, SqlDialect dialect) {
    return fixture(name, uri, ConnectionBoundBackend.features(JdbcMode.ROW, dialect));
  }

  private static BackendFixture fixture(String name, Supplier<String> uri, Set<Feature> declared) {
    return new BackendFixture() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public BackendFactory backend() {
        return context -> new JdbcBackendProvider().open(URI.create(uri.get()), context);
      }

      @Override
      public Set<Feature> features() {
        return declared;
      }

      @Override
      public Optional<String> uri() {
        return Optional.of(uri.get());
      }
    };
  }

  /**
   * A data source that opens a new connection to {@code url} for each {@code getConnection} (no
   * pool), and runs {@code whenAsked} on the asking thread first: tests count the transactions of a
   * backend, or see which thread runs them.
   */
  static DataSource connectionPerCall(String url, Runnable whenAsked) {
    return (DataSource)
        Proxy.newProxyInstance(
            DataSource.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, method, args) -> {
              if (method.getName().equals("getConnection")) {
                whenAsked.run();
                return DriverManager.getConnection(url);
              }
              return switch (method.getName()) {
                case "toString" -> "connections to " + url;
                case "hashCode" -> System.identityHashCode(proxy);
                case "equals" -> proxy == args[0];
                default -> throw new UnsupportedOperationException(method.getName());
              };
            });
  }
}
