package io.latchkey.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.latchkey.servers.MariaDbTestServer;
import io.latchkey.servers.PostgresTestServer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.jspecify.annotations.Nullable;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Issue 9's comparison: latchkey's JDBC backend on PostgreSQL beside ShedLock, Spring Integration's
 * lock registry and the raw advisory-lock floor, on one PostgreSQL server that it starts itself
 * ({@link PostgresTestServer}: the machine's PostgreSQL binaries, a new cluster on a free loopback
 * port; never the machine's own server).
 *
 * <ul>
 *   <li>{@code Floor}: {@code SELECT pg_advisory_lock(k)} then {@code SELECT pg_advisory_unlock(k)}
 *       on a connection borrowed from a HikariCP pool for the cycle: two round trips, the server's
 *       own wait queue, no lease, no fencing, no owner record.
 *   <li>{@code Latchkey table}: {@code Latchkey.connect("jdbc:postgresql://…")}, table mode (the
 *       default), {@code lock()}/{@code unlock()}.
 *   <li>{@code Latchkey advisory}: the same with {@code latchkey.mode=advisory} (its own table
 *       prefix).
 *   <li>{@code ShedLock}: {@code JdbcTemplateLockProvider} (database time), {@code
 *       lock(config)}/{@code SimpleLock.unlock()}, lock-at-most-for 30 s. ShedLock never waits: a
 *       refused attempt is retried at once (after {@link Thread#onSpinWait()}), as a caller that
 *       needs the lock must do.
 *   <li>{@code Spring registry}: Spring Integration's {@code JdbcLockRegistry} over a {@code
 *       DefaultLockRepository}, {@code lock()}/{@code unlock()}, defaults (a refused attempt is
 *       retried every 100 ms). One registry for all threads, as an application has: its threads
 *       queue on a local {@code ReentrantLock} first, and only the one that holds it goes to the
 *       database.
 *   <li>{@code Spring registry ×8}: a registry per thread, as eight processes would have.
 * </ul>
 *
 * All pools (HikariCP for the peers and the floor, latchkey's own) have 8 connections per client.
 *
 * <p>Measured: each library's uncontended cycle, paired ({@link PairedLatency}, one thread); then
 * contended windows ({@link ContendedWindow}) in two shapes, {@code --threads} threads (8) on one
 * lock, and as many threads each on a lock of its own: the uncontended path's throughput under a
 * server kept busy, where the SQL each library sends per cycle counts more than its round trips.
 *
 * <p>The same comparison runs on MariaDB ({@link MariaDbTestServer}, started the same way; floor
 * {@code GET_LOCK(name, timeout)} then {@code RELEASE_LOCK(name)}; advisory mode holds {@code
 * GET_LOCK}; statements counted from the general query log) and on H2 (in memory, in this process;
 * table mode, ShedLock and Spring only: H2 has no lock of its own for a floor or advisory mode, and
 * no statement log to count). {@code --database} picks one; all three run by default, one after the
 * other, each with a report of its own. {@code --breakdown} instead measures where an uncontended
 * PostgreSQL cycle's time goes, layer by layer ({@link JdbcBreakdown}).
 *
 * <pre>
 * java -cp latchkey-bench/target/latchkey-benchmarks.jar io.latchkey.bench.JdbcBenchmarks \
 *     [--database postgres|mariadb|h2|all | --breakdown] [--rounds 2] [--settle 2] [--window 5] [--paired 12] \
 *     [--threads 8] [--quick] [--out DIR]
 * </pre>
 */
public final class JdbcBenchmarks {
  private static final String TAG = "jdbc-bench";
  private static final int POOL_SIZE = 8;
  private static final int COUNTED = 200;
  private static final Duration SHEDLOCK_AT_MOST = Duration.ofSeconds(30);

  static final String FLOOR = "Floor (pg_advisory_lock)";
  static final String FLOOR_MARIADB = "Floor (GET_LOCK)";
  static final String TABLE = "Latchkey table";
  static final String ADVISORY = "Latchkey advisory";
  static final String SHEDLOCK = "ShedLock";
  static final String SPRING = "Spring registry";
  static final String SPRING_EACH = "Spring registry ×8";

  private JdbcBenchmarks() {}

  // ShedLock's documented DDL: the generic one for PostgreSQL and H2, TIMESTAMP(3) for MariaDB.
  private static final String SHEDLOCK_TABLE =
      "CREATE TABLE shedlock (name VARCHAR(64) NOT NULL PRIMARY KEY,"
          + " lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL,"
          + " locked_by VARCHAR(255) NOT NULL)";
  private static final String SHEDLOCK_TABLE_MARIADB =
      "CREATE TABLE shedlock (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP(3) NOT NULL,"
          + " locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),"
          + " locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))";

  /** A database of the comparison: what differs between them but the server itself. */
  private enum Database {
    POSTGRES(
        "PostgreSQL",
        FLOOR,
        "schema-postgresql.sql",
        SHEDLOCK_TABLE,
        "pgjdbc " + PeerComparison.peerVersion("postgresql"),
        "jdbc-benchmark.md"),
    MARIADB(
        "MariaDB",
        FLOOR_MARIADB,
        "schema-mysql.sql",
        SHEDLOCK_TABLE_MARIADB,
        "MariaDB Connector/J " + PeerComparison.peerVersion("mariadb-java-client"),
        "jdbc-benchmark-mariadb.md"),
    // No floor and no advisory mode: H2 has no lock of its own to hold.
    H2(
        "H2",
        null,
        "schema-h2.sql",
        SHEDLOCK_TABLE,
        "its driver in the same jar",
        "jdbc-benchmark-h2.md");

    final String name;
    final @Nullable String floor;
    final String springSchema;
    final String shedLockTable;
    final String driver;
    final String reportFile;

    Database(
        String name,
        @Nullable String floor,
        String springSchema,
        String shedLockTable,
        String driver,
        String reportFile) {
      this.name = name;
      this.floor = floor;
      this.springSchema = springSchema;
      this.shedLockTable = shedLockTable;
      this.driver = driver;
      this.reportFile = reportFile;
    }

    /**
     * latchkey's options after a URL: it has a driver option already ({@code ?user=…}) but H2's.
     */
    String latchkeyUrl(String url, String options) {
      return this == H2 ? url + ";" + options.replace('&', ';') : url + "&" + options;
    }
  }

  /**
   * Runs the comparison and prints the report.
   *
   * @param args see the class comment
   * @throws Exception if a benchmark fails
   */
  public static void main(String[] args) throws Exception {
    List<String> rest = new ArrayList<>();
    String database = "all";
    boolean breakdown = false;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--database") && i + 1 < args.length) {
        database = args[++i];
      } else if (args[i].equals("--breakdown")) {
        breakdown = true;
      } else {
        rest.add(args[i]);
      }
    }
    PeerComparison.Settings settings =
        PeerComparison.Settings.parse(rest.toArray(String[]::new), "jdbc-benchmark");
    if (breakdown) {
      try (PostgresTestServer server = PostgresTestServer.start()) {
        String url = server.jdbcUrl();
        JdbcBreakdown.run(url, serverVersion(url, "SHOW server_version"), settings);
      }
      return;
    }
    List<String> databases =
        database.equals("all") ? List.of("postgres", "mariadb", "h2") : List.of(database);
    for (String which : databases) {
      switch (which) {
        case "postgres" -> {
          try (PostgresTestServer server = PostgresTestServer.start()) {
            String url = server.jdbcUrl();
            compare(
                Database.POSTGRES,
                url,
                serverVersion(url, "SHOW server_version"),
                StatementCounts.postgres(server),
                settings);
          }
        }
        case "mariadb" -> {
          try (MariaDbTestServer server = MariaDbTestServer.start()) {
            String url = server.jdbcUrl();
            compare(
                Database.MARIADB,
                url,
                serverVersion(url, "SELECT VERSION()"),
                StatementCounts.mariaDb(server),
                settings);
          }
        }
        case "h2" -> {
          // In this process, in memory; the connection held here keeps the database alive
          // between the peers' pools. No statement log to count from.
          String url = "jdbc:h2:mem:latchkey-bench;DB_CLOSE_DELAY=-1";
          try (Connection keep = java.sql.DriverManager.getConnection(url)) {
            String version = keep.getMetaData().getDatabaseProductVersion() + " (in memory)";
            compare(Database.H2, url, version, null, settings);
          }
        }
        default ->
            throw new IllegalArgumentException(
                "--database " + which + ": expected postgres, mariadb, h2 or all");
      }
    }
  }

  private static void compare(
      Database database,
      String url,
      String version,
      StatementCounts.@Nullable Log log,
      PeerComparison.Settings settings)
      throws Exception {
    PeerComparison.Start start = PeerComparison.Start.now();
    List<PeerComparison.Peer> peers = new ArrayList<>();
    try {
      PeerComparison.log(TAG, database.name + " " + version + " at " + url);
      createPeerTables(database, url);
      String floor = database.floor;
      if (floor != null) {
        peers.add(floor(floor, url));
      }
      peers.add(
          PeerComparison.latchkey(TABLE, database.latchkeyUrl(url, "latchkey.createSchema=true")));
      if (floor != null) {
        // Advisory mode needs the database's own locks, as the floor does: not on H2.
        peers.add(
            PeerComparison.latchkey(
                ADVISORY,
                database.latchkeyUrl(
                    url,
                    "latchkey.createSchema=true&latchkey.mode=advisory"
                        + "&latchkey.tablePrefix=latchkey_advisory_")));
      }
      peers.add(shedLock(url));
      peers.add(spring(SPRING, url, 1));
      peers.add(spring(SPRING_EACH, url, settings.threads));
      PeerComparison.Shape oneLock =
          new PeerComparison.Shape(
              settings.threads + " threads, one lock", settings.threads, false);
      PeerComparison.Shape lockEach =
          new PeerComparison.Shape(
              settings.threads + " threads, a lock each", settings.threads, true);
      PeerComparison.Results results =
          PeerComparison.run(TAG, peers, List.of(oneLock, lockEach), settings, List.of());
      String body =
          PeerComparison.tables(results)
              + "\n"
              + (log == null
                  ? "(No statement counts: H2 runs in this process and keeps no statement log.)\n"
                  : statements(log, peers, settings))
              + "\n"
              + targets(results, oneLock, lockEach, settings, floor);
      PeerComparison.finish(
          TAG,
          settings,
          database.reportFile,
          start,
          List.of(
              database.name + " " + version,
              database.driver,
              "ShedLock " + PeerComparison.peerVersion("shedlock"),
              "Spring Integration " + PeerComparison.peerVersion("spring-integration"),
              "Spring Framework " + PeerComparison.peerVersion("spring-framework"),
              "HikariCP " + RedisBenchmarks.mavenVersion("com.zaxxer", "HikariCP")),
          body);
    } finally {
      // Before the server stops, so that no pool is left reconnecting.
      peers.forEach(PeerComparison.Peer::close);
    }
  }

  private static String targets(
      PeerComparison.Results results,
      PeerComparison.Shape shape,
      PeerComparison.Shape lockEach,
      PeerComparison.Settings settings,
      @Nullable String floor) {
    StringBuilder out = PeerComparison.targetsTable("issue 9");
    PairedLatency.Latencies table = results.paired(TABLE);
    for (String peer : List.of(SHEDLOCK, SPRING)) {
      out.append(
          PeerComparison.latencyTarget(
              "uncontended, table mode at least as fast as " + peer,
              table,
              results.paired(peer),
              1.0));
    }
    for (int round = 1; round <= settings.rounds; round++) {
      ContendedWindow.Result ours = results.window(lockEach, TABLE, round);
      ContendedWindow.Result shedLock = results.window(lockEach, SHEDLOCK, round);
      double ratio = ours.throughput() / shedLock.throughput();
      out.append(
          String.format(
              Locale.ROOT,
              "| uncontended, %s, round %d: table mode's throughput ≥ 1.5× ShedLock's |"
                  + " %.0f / %.0f cycles/s (%.2f×) | %s |%n",
              lockEach.title(),
              round,
              ours.throughput(),
              shedLock.throughput(),
              ratio,
              ratio >= 1.5 ? "met" : "**missed**"));
    }
    if (floor != null) {
      out.append(
          PeerComparison.latencyTarget(
              "uncontended, advisory mode beside the floor (reported: ≤ 1.0× is impossible)",
              results.paired(ADVISORY),
              results.paired(floor),
              Double.POSITIVE_INFINITY));
    }
    for (int round = 1; round <= settings.rounds; round++) {
      ContendedWindow.Result ours = results.window(shape, TABLE, round);
      List<String> cells = new ArrayList<>();
      boolean met = true;
      for (String peer : List.of(SHEDLOCK, SPRING, SPRING_EACH)) {
        ContendedWindow.Result theirs = results.window(shape, peer, round);
        met &= ours.throughput() >= theirs.throughput();
        cells.add(
            String.format(
                Locale.ROOT,
                "%s %.0f (%.2f×, fairness %.2f)",
                peer,
                theirs.throughput(),
                ours.throughput() / theirs.throughput(),
                theirs.fairness()));
      }
      out.append(
          String.format(
              Locale.ROOT,
              "| one lock, round %d: table mode's throughput ≥ the peers' | %.0f cycles/s,"
                  + " fairness %.2f, hand-off p99 %.2f ms; %s | %s |%n",
              round,
              ours.throughput(),
              ours.fairness(),
              ours.handoffMillis(0.99),
              String.join("; ", cells),
              met ? "met" : "**missed**"));
    }
    return out.toString();
  }

  /**
   * The statements per cycle of each library, counted from the server's log: alone, then eight
   * threads on one lock (after the timed steps: statement logging slows the server down).
   */
  private static String statements(
      StatementCounts.Log server, List<PeerComparison.Peer> peers, PeerComparison.Settings settings)
      throws Exception {
    StringBuilder out =
        new StringBuilder(
            "#### SQL statements per cycle ("
                + server.describe()
                + ")\n\n"
                + "| library | alone | by first keyword | "
                + settings.threads
                + " threads, one lock | by first keyword |\n|---|---:|---|---:|---|\n");
    for (PeerComparison.Peer peer : peers) {
      StatementCounts.Counted alone =
          StatementCounts.count(
              server, peer.locker(TAG + "-statements-" + System.nanoTime()).cycle(), COUNTED);
      String name = TAG + "-statements-contended-" + System.nanoTime();
      List<Locker> lockers = new ArrayList<>();
      for (int t = 0; t < settings.threads; t++) {
        lockers.add(peer.locker(name));
      }
      StatementCounts.Window window = new StatementCounts.Window(server);
      ContendedWindow.Result result =
          ContendedWindow.measure(
              peer.label() + ", statements",
              lockers,
              1,
              Duration.ofSeconds(1),
              Duration.ofSeconds(2),
              window);
      StatementCounts.Counted contended = window.counted(result.cycles());
      PeerComparison.log(
          TAG,
          String.format(
              Locale.ROOT,
              "statements per cycle, %s: alone %.2f (%s); contended %.2f (%s)",
              peer.label(),
              alone.perCycle(),
              alone.breakdown(),
              contended.perCycle(),
              contended.breakdown()));
      out.append(
          String.format(
              Locale.ROOT,
              "| %s | %.2f | %s | %.2f | %s |%n",
              peer.label(),
              alone.perCycle(),
              alone.breakdown(),
              contended.perCycle(),
              contended.breakdown()));
    }
    return out.toString();
  }

  private static String serverVersion(String url, String query) throws SQLException {
    try (Connection connection = java.sql.DriverManager.getConnection(url);
        Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery(query)) {
      rows.next();
      return rows.getString(1);
    }
  }

  /** ShedLock's table (its documented DDL) and Spring Integration's (from its jar). */
  private static void createPeerTables(Database database, String url) throws Exception {
    String spring;
    try (var in =
        DefaultLockRepository.class.getResourceAsStream(
            "/org/springframework/integration/jdbc/" + database.springSchema)) {
      if (in == null) {
        throw new IllegalStateException(
            "Spring Integration's " + database.springSchema + " is missing");
      }
      spring = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    int start = spring.indexOf("CREATE TABLE INT_LOCK");
    String intLock = spring.substring(start, spring.indexOf(';', start));
    try (Connection connection = java.sql.DriverManager.getConnection(url);
        Statement statement = connection.createStatement()) {
      statement.execute(database.shedLockTable);
      statement.execute(intLock);
    }
  }

  private static HikariDataSource pool(String url, int size) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(size);
    return new HikariDataSource(config);
  }

  /**
   * The floor: the database's own lock taken and given back on a connection borrowed for the cycle.
   * PostgreSQL: {@code pg_advisory_lock(k)}, {@code pg_advisory_unlock(k)}; MariaDB: {@code
   * GET_LOCK(name, timeout)}, {@code RELEASE_LOCK(name)}. Both wait in the server's own queue.
   */
  static PeerComparison.Peer floor(String label, String url) {
    HikariDataSource pool = pool(url, POOL_SIZE);
    boolean postgres = label.equals(FLOOR);
    return PeerComparison.Peer.of(
        label,
        name ->
            postgres
                ? serverLocker(
                    pool,
                    "SELECT pg_advisory_lock(?)",
                    "SELECT pg_advisory_unlock(?)",
                    statement -> statement.setLong(1, name.hashCode()))
                : serverLocker(
                    pool,
                    "SELECT GET_LOCK(?, " + Locker.WAIT.toSeconds() + ")",
                    "SELECT RELEASE_LOCK(?)",
                    statement -> statement.setString(1, name)),
        pool::close);
  }

  /** Sets a statement's parameters. */
  private interface Binder {
    void bind(PreparedStatement statement) throws SQLException;
  }

  private static Locker serverLocker(
      DataSource pool, String acquireSql, String releaseSql, Binder binder) {
    return new Locker() {
      private @Nullable Connection connection;

      @Override
      public void acquire() throws SQLException {
        Connection borrowed = pool.getConnection();
        connection = borrowed;
        if (!call(borrowed, acquireSql, binder)) {
          connection = null;
          borrowed.close();
          throw new IllegalStateException(acquireSql + " refused in " + WAIT);
        }
      }

      @Override
      public void release() throws SQLException {
        Connection held = connection;
        if (held == null) {
          throw new IllegalStateException("not held");
        }
        connection = null;
        try (held) {
          if (!call(held, releaseSql, binder)) {
            throw new IllegalStateException(releaseSql + " found no lock");
          }
        }
      }
    };
  }

  private static boolean call(Connection connection, String sql, Binder binder)
      throws SQLException {
    try (PreparedStatement statement = connection.prepareStatement(sql)) {
      binder.bind(statement);
      try (ResultSet rows = statement.executeQuery()) {
        rows.next();
        // pg_advisory_lock returns void (read as an empty string), pg_advisory_unlock a boolean;
        // GET_LOCK and RELEASE_LOCK 1, 0 or NULL.
        String result = rows.getString(1);
        return !"f".equals(result) && !"0".equals(result) && !(result == null && isMariaDb(sql));
      }
    }
  }

  private static boolean isMariaDb(String sql) {
    return sql.contains("_LOCK(");
  }

  private static PeerComparison.Peer shedLock(String url) {
    HikariDataSource pool = pool(url, POOL_SIZE);
    JdbcTemplateLockProvider provider =
        new JdbcTemplateLockProvider(
            JdbcTemplateLockProvider.Configuration.builder()
                .withJdbcTemplate(new JdbcTemplate(pool))
                .usingDbTime()
                .build());
    return PeerComparison.Peer.of(
        SHEDLOCK,
        name ->
            new Locker() {
              private @Nullable SimpleLock held;

              @Override
              public void acquire() {
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (true) {
                  Optional<SimpleLock> lock =
                      provider.lock(
                          new LockConfiguration(
                              Instant.now(), name, SHEDLOCK_AT_MOST, Duration.ZERO));
                  if (lock.isPresent()) {
                    held = lock.get();
                    return;
                  }
                  if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                        "ShedLock did not grant " + name + " in " + WAIT);
                  }
                  Thread.onSpinWait();
                }
              }

              @Override
              public void release() {
                SimpleLock lock = held;
                if (lock == null) {
                  throw new IllegalStateException("not held");
                }
                held = null;
                lock.unlock();
              }
            },
        pool::close);
  }

  /** Spring Integration's registry: one for all threads, or one per thread (registries > 1). */
  private static PeerComparison.Peer spring(String label, String url, int registries) {
    HikariDataSource pool = pool(url, POOL_SIZE);
    List<JdbcLockRegistry> opened = new ArrayList<>();
    List<DefaultLockRepository> repositories = new ArrayList<>();
    for (int i = 0; i < registries; i++) {
      DefaultLockRepository repository = new DefaultLockRepository(pool);
      repository.setTransactionManager(new DataSourceTransactionManager(pool));
      repository.afterPropertiesSet();
      repository.afterSingletonsInstantiated();
      repository.start();
      repositories.add(repository);
      opened.add(new JdbcLockRegistry(repository));
    }
    AtomicInteger next = new AtomicInteger();
    return PeerComparison.Peer.of(
        label,
        name -> {
          Lock lock = opened.get(next.getAndIncrement() % registries).obtain(name);
          return Locker.lockUnlock(lock);
        },
        () -> {
          repositories.forEach(DefaultLockRepository::close);
          pool.close();
        });
  }
}
