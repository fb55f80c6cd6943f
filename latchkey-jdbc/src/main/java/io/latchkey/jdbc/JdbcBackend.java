package io.latchkey.jdbc;

import io.latchkey.BackendUnavailableException;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.BackendFactory;
import io.latchkey.spi.LatchkeyBackend;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Opens the relational database backend over a {@link DataSource} of yours (HikariCP or any other
 * pool):
 *
 * <pre>{@code
 * HikariDataSource pool = new HikariDataSource(config);
 * try (Latchkey latchkey =
 *     Latchkey.using(JdbcBackend.builder(pool).build(), LatchkeyOptions.defaults())) {
 *   ...
 * }
 * }</pre>
 *
 * Each operation takes a connection from the data source for one short transaction and gives it
 * back. On PostgreSQL one more connection stays open for LISTEN (wake-ups); size the pool for it.
 * In {@link JdbcMode#ADVISORY} mode one more connection is borrowed for the client's whole life:
 * the one that holds its advisory locks. In {@link JdbcMode#ROW} mode each held lock borrows one
 * more for as long as it is held, at most {@link Builder#holdConnections} at once. Closing the
 * client leaves the data source open. To connect by URI instead, see {@link JdbcBackendProvider}.
 */
public final class JdbcBackend {
  private JdbcBackend() {}

  /**
   * @param dataSource where connections come from; the backend never closes it
   * @return a builder with the defaults: {@link JdbcMode#TABLE}, tables prefixed {@code latchkey_},
   *     no schema creation (run the shipped SQL file, see {@link SqlDialect#schemaResource()})
   */
  public static Builder builder(DataSource dataSource) {
    return new Builder(Objects.requireNonNull(dataSource, "dataSource must not be null"));
  }

  /** Options of a backend over a data source. */
  public static final class Builder {
    private final DataSource dataSource;
    private JdbcMode mode = JdbcMode.TABLE;
    private String tablePrefix = TableSchema.DEFAULT_PREFIX;
    private boolean createSchema;
    private int holdConnections = DEFAULT_HOLD_CONNECTIONS;
    private @Nullable SqlDialect dialect;
    private boolean connectionWaitBounded;

    private Builder(DataSource dataSource) {
      this.dataSource = dataSource;
    }

    /**
     * @param mode how the database keeps locks
     * @return this builder
     */
    public Builder mode(JdbcMode mode) {
      this.mode = Objects.requireNonNull(mode, "mode must not be null");
      return this;
    }

    /**
     * @param tablePrefix the prefix of the table names, a letter then at most 29 letters, digits or
     *     '_'; {@code latchkey_} by default
     * @return this builder
     */
    public Builder tablePrefix(String tablePrefix) {
      this.tablePrefix = TableSchema.checkedPrefix(tablePrefix);
      return this;
    }

    /**
     * @param createSchema true to create the tables that are missing when the backend opens, and
     *     again when an operation finds them missing (needs the right to create tables); false (the
     *     default) to expect them
     * @return this builder
     */
    public Builder createSchema(boolean createSchema) {
      this.createSchema = createSchema;
      return this;
    }

    /**
     * @param holdConnections row mode only: how many locks a client holds at once, each on a
     *     connection borrowed from the data source while it is held, from 1 to 1000; 16 by default.
     *     One more is refused at once with {@link IllegalStateException}, never waited for.
     * @return this builder
     */
    public Builder holdConnections(int holdConnections) {
      this.holdConnections = checkedHoldConnections(holdConnections);
      return this;
    }

    /**
     * @param dialect the database, if its product name does not tell (it is read from the
     *     connection's metadata otherwise)
     * @return this builder
     */
    public Builder dialect(SqlDialect dialect) {
      this.dialect = Objects.requireNonNull(dialect, "dialect must not be null");
      return this;
    }

    /**
     * Whether the data source hands out a connection, or fails, within the client's operation
     * timeout (for HikariCP: its {@code connectionTimeout} at most the operation timeout). If so,
     * the blocking {@code lock()} and {@code unlock()} run their transaction on the calling thread,
     * which waits for it anyway: two thread hand-offs fewer per operation. By default (false) every
     * operation runs on the engine's executor, and the engine's timer ends a longer wait for a
     * connection at the operation timeout; on the calling thread nothing could. Say true only when
     * it holds. The backend's own pool ({@code Latchkey.connect("jdbc:…")}) always keeps the bound.
     *
     * @param connectionWaitBounded whether the data source keeps to the operation timeout
     * @return this builder
     */
    public Builder connectionWaitBounded(boolean connectionWaitBounded) {
      this.connectionWaitBounded = connectionWaitBounded;
      return this;
    }

    /**
     * @return a factory for {@link io.latchkey.Latchkey#using}; each client it opens checks (or
     *     creates) the schema first
     */
    public BackendFactory build() {
      JdbcMode chosenMode = mode;
      String prefix = tablePrefix;
      boolean create = createSchema;
      int holds = holdConnections;
      SqlDialect given = dialect;
      boolean bounded = connectionWaitBounded;
      return context -> {
        ConnectionSource source = ConnectionSource.of(dataSource, bounded);
        Described described = describe(dataSource, given);
        return open(
            new Settings(
                chosenMode, described.dialect, prefix, create, holds, described.description),
            source,
            ConnectionSource.of(dataSource),
            dataSource::getConnection,
            context);
      };
    }
  }

  /** Row mode's default bound on the locks a client holds at once. */
  static final int DEFAULT_HOLD_CONNECTIONS = 16;

  /** The most connections a pool of the backend may have. */
  static final int MAX_CONNECTIONS = 1_000;

  static int checkedHoldConnections(int holdConnections) {
    if (holdConnections < 1 || holdConnections > MAX_CONNECTIONS) {
      throw new IllegalArgumentException(
          "holdConnections must be from 1 to " + MAX_CONNECTIONS + ", was " + holdConnections);
    }
    return holdConnections;
  }

  /** What a backend is opened with. */
  record Settings(
      JdbcMode mode,
      SqlDialect dialect,
      String tablePrefix,
      boolean createSchema,
      int holdConnections,
      String url) {
    String description() {
      return url
          + " ("
          + mode.name().toLowerCase(java.util.Locale.ROOT)
          + " mode"
          + (tablePrefix.equals(TableSchema.DEFAULT_PREFIX) ? "" : ", tables " + tablePrefix + "*")
          + ")";
    }

    String identity() {
      return url + "#" + tablePrefix;
    }
  }

  private record Described(SqlDialect dialect, String description) {}

  private static Described describe(DataSource dataSource, @Nullable SqlDialect given) {
    try (Connection connection = dataSource.getConnection()) {
      DatabaseMetaData meta = connection.getMetaData();
      SqlDialect dialect =
          given != null ? given : SqlDialect.ofProduct(meta.getDatabaseProductName());
      String url = meta.getURL();
      return new Described(dialect, url == null ? dialect.name() : JdbcUrl.redacted(url));
    } catch (SQLException e) {
      throw new BackendUnavailableException(
          "the data source gave no connection to open the latchkey-jdbc backend: " + e.getMessage(),
          e);
    }
  }

  /**
   * @param source the operations' connections
   * @param holdConnections row mode's hold connections (left alone in the other modes: a source
   *     that was never borrowed from holds nothing)
   * @param listenerConnections opens PostgreSQL's listening connection and advisory mode's pinned
   *     one
   */
  static LatchkeyBackend open(
      Settings settings,
      ConnectionSource source,
      ConnectionSource holdConnections,
      PostgresWakeups.Opener listenerConnections,
      BackendContext context) {
    return switch (settings.mode()) {
      case TABLE -> TableBackend.open(settings, source, listenerConnections, context);
      case ADVISORY, ROW ->
          ConnectionBoundBackend.open(
              settings, source, holdConnections, listenerConnections, context);
    };
  }
}
