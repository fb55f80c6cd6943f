package io.latchkey.jdbc;

import io.latchkey.spi.BackendContext;
import io.latchkey.spi.BackendProvider;
import io.latchkey.spi.LatchkeyBackend;
import java.net.URI;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * Opens {@code jdbc:} URIs for {@link io.latchkey.Latchkey#connect(String)}: {@code
 * jdbc:postgresql://}, {@code jdbc:mariadb://}, {@code jdbc:mysql://} and {@code jdbc:h2:}, with
 * the driver of that database on the class path. Credentials go as {@code //user:password@host} or
 * as the driver's own parameters; they are never shown in descriptions or messages.
 *
 * <p>Options, as parameters of the URI ({@code ?latchkey.mode=table&...} or, for H2, {@code
 * ;latchkey.mode=table}), removed before the URL goes to the driver:
 *
 * <ul>
 *   <li>{@code latchkey.mode}: {@code table} (the default), {@code advisory} or {@code row}
 *       (PostgreSQL and MariaDB/MySQL only; see {@link JdbcMode});
 *   <li>{@code latchkey.tablePrefix}: the prefix of the table names, {@code latchkey_} by default;
 *   <li>{@code latchkey.createSchema}: {@code true} to create missing tables at open, and again
 *       when an operation finds them missing;
 *   <li>{@code latchkey.poolSize}: the connections of the backend's own pool, 8 by default (in
 *       advisory mode the pinned connection that holds the locks, and on PostgreSQL the one that
 *       listens, come on top);
 *   <li>{@code latchkey.holdConnections}: row mode only, how many locks a client holds at once,
 *       each on a connection of its own while it is held, 16 by default (one more is refused at
 *       once with {@link IllegalStateException}).
 * </ul>
 *
 * For a pool of your own (HikariCP), use {@link JdbcBackend#builder(javax.sql.DataSource)}.
 */
public final class JdbcBackendProvider implements BackendProvider {
  private static final int DEFAULT_POOL_SIZE = 8;
  private static final Set<String> OPTIONS =
      Set.of("mode", "tablePrefix", "createSchema", "poolSize", "holdConnections");

  /** Called by {@link java.util.ServiceLoader}. */
  public JdbcBackendProvider() {}

  @Override
  public boolean supportsScheme(String scheme) {
    return "jdbc".equals(scheme);
  }

  @Override
  public LatchkeyBackend open(URI uri, BackendContext context) {
    JdbcUrl url = new JdbcUrl(uri.toString());
    SqlDialect dialect = SqlDialect.ofUrl(url.driverUrl);
    Map<String, String> options = url.options;
    for (String option : options.keySet()) {
      if (!OPTIONS.contains(option)) {
        throw new IllegalArgumentException(
            "unknown option 'latchkey."
                + option
                + "' in a jdbc: URI; the options are latchkey."
                + String.join(", latchkey.", OPTIONS.stream().sorted().toList()));
      }
    }
    JdbcMode mode = JdbcMode.parse(options.getOrDefault("mode", "table"));
    String prefix =
        TableSchema.checkedPrefix(options.getOrDefault("tablePrefix", TableSchema.DEFAULT_PREFIX));
    boolean createSchema =
        parseBoolean("createSchema", options.getOrDefault("createSchema", "false"));
    int poolSize =
        parseSize("poolSize", options.getOrDefault("poolSize", String.valueOf(DEFAULT_POOL_SIZE)));
    int holdConnections =
        parseSize(
            "holdConnections",
            options.getOrDefault(
                "holdConnections", String.valueOf(JdbcBackend.DEFAULT_HOLD_CONNECTIONS)));
    Properties properties = url.properties;
    defaultTimeouts(dialect, url.driverUrl, properties, context);
    boolean keepsDeadline = keepsDeadline(dialect, url.driverUrl);
    ConnectionPool pool =
        new ConnectionPool(
            url.driverUrl,
            boundedIdleTransactions(dialect, url.driverUrl, properties, context),
            poolSize,
            keepsDeadline);
    // Row mode's holds: a pool of their own, so that held locks never take the operations'
    // connections (it opens nothing until a lock is held). Their transactions stay open for as
    // long as a lock is held, so no idle-transaction bound applies to them.
    ConnectionPool holds =
        new ConnectionPool(url.driverUrl, properties, holdConnections, keepsDeadline);
    JdbcBackend.Settings settings =
        new JdbcBackend.Settings(
            mode, dialect, prefix, createSchema, holdConnections, JdbcUrl.redacted(url.driverUrl));
    return JdbcBackend.open(settings, pool, holds, pool::openDedicated, context);
  }

  /**
   * Bounds connecting by the operation timeout, unless the URL says otherwise, names the
   * application for the database's views of its sessions, and on MariaDB/MySQL lets a text carry
   * several statements ({@code allowMultiQueries}).
   */
  private static void defaultTimeouts(
      SqlDialect dialect, String url, Properties properties, BackendContext context) {
    String lower = url.toLowerCase(Locale.ROOT);
    long millis = Math.max(1, context.operationTimeout().toMillis());
    switch (dialect) {
      case POSTGRESQL -> {
        if (!lower.contains("connecttimeout=")) {
          // In seconds, and 0 would mean none.
          properties.setProperty(
              "connectTimeout", String.valueOf(Math.max(1, (millis + 999) / 1000)));
        }
        if (!lower.contains("sockettimeout=")) {
          // Bounds each read, the handshake of a new connection included (connectTimeout bounds
          // only the TCP connect): a server that accepts and then stays silent would otherwise
          // hold the thread that opens a connection for as long as TCP lets it. Each operation
          // sets its own network timeout on top.
          properties.setProperty(
              "socketTimeout", String.valueOf(Math.max(1, (millis + 999) / 1000)));
        }
        if (!lower.contains("applicationname=")) {
          properties.setProperty("ApplicationName", "latchkey");
        }
      }
      case MARIADB -> {
        if (!lower.contains("connecttimeout=")) {
          properties.setProperty("connectTimeout", String.valueOf(millis));
        }
        if (!lower.contains("allowmultiqueries=")) {
          // Several statements in one text, one round trip (Writes, Sql.lockAndLoad); only on
          // the connections latchkey makes and uses itself. A URL that says otherwise is obeyed.
          properties.setProperty("allowMultiQueries", "true");
        }
      }
      case H2 -> {
        // In-process or on the loopback: nothing to bound.
      }
    }
  }

  /**
   * Whether the pool may run an operation on the caller's thread ({@link
   * ConnectionSource#keepsDeadline()}), where nothing but the driver and the pool end a wait: only
   * if the driver obeys the network timeout that each operation sets to its time left (the pool
   * bounds the opening of a connection itself, {@link ConnectionPool}): pgjdbc, MariaDB's driver,
   * and MySQL's own (Connector/J, {@code jdbc:mysql:}), each tested behind a frozen network. Not so
   * on H2 over the network, whose driver ignores the network timeout: the operations then run on
   * the blocking executor, and the engine's timer ends the caller's wait.
   */
  static boolean keepsDeadline(SqlDialect dialect, String url) {
    String lower = url.toLowerCase(Locale.ROOT);
    return switch (dialect) {
      case POSTGRESQL, MARIADB -> true;
      case H2 ->
          !lower.startsWith("jdbc:h2:tcp:")
              && !lower.startsWith("jdbc:h2:ssl:")
              && !lower.contains("auto_server=true");
    };
  }

  /**
   * The properties of the operations' connections: on PostgreSQL and MariaDB, the server ends a
   * session that sits inside a transaction for longer than the operation timeout without sending
   * its next statement, unless the URL sets that itself. An operation's transaction locks the
   * name's resource row between its round trips; a client stopped there (a GC pause, SIGSTOP, a
   * frozen network) would otherwise keep every other client of that lock waiting until it resumes,
   * when its own call has long timed out. The transaction is rolled back: nothing of it is applied.
   */
  static Properties boundedIdleTransactions(
      SqlDialect dialect, String url, Properties properties, BackendContext context) {
    String lower = url.toLowerCase(Locale.ROOT);
    long millis = Math.max(1, context.operationTimeout().toMillis());
    Properties bounded = new Properties();
    bounded.putAll(properties);
    switch (dialect) {
      case POSTGRESQL -> {
        if (!lower.contains("options=") && !properties.containsKey("options")) {
          bounded.setProperty("options", "-c idle_in_transaction_session_timeout=" + millis);
        }
      }
      case MARIADB -> {
        if (lower.startsWith("jdbc:mariadb:")
            && !lower.contains("sessionvariables=")
            && !properties.containsKey("sessionVariables")) {
          // In whole seconds; MariaDB's own variable (a MySQL server would refuse the session).
          bounded.setProperty(
              "sessionVariables", "idle_transaction_timeout=" + Math.max(1, (millis + 999) / 1000));
        }
      }
      case H2 -> {
        // In-process or on the loopback: the server has no such bound.
      }
    }
    return bounded;
  }

  private static boolean parseBoolean(String option, String value) {
    if (value.equalsIgnoreCase("true") || value.equalsIgnoreCase("false")) {
      return Boolean.parseBoolean(value);
    }
    throw new IllegalArgumentException(
        "latchkey." + option + " must be true or false, was '" + value + "'");
  }

  private static int parseSize(String option, String value) {
    try {
      int size = Integer.parseInt(value.trim());
      if (size >= 1 && size <= JdbcBackend.MAX_CONNECTIONS) {
        return size;
      }
    } catch (NumberFormatException notANumber) {
      // Reported below.
    }
    throw new IllegalArgumentException(
        "latchkey."
            + option
            + " must be a number from 1 to "
            + JdbcBackend.MAX_CONNECTIONS
            + ", was '"
            + value
            + "'");
  }
}
