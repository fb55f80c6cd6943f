package io.latchkey.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.latchkey.jdbc.JdbcBackend;
import io.latchkey.jdbc.JdbcBackendProvider;
import io.latchkey.jdbc.JdbcMode;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.GrantEvents;
import io.latchkey.spi.LatchkeyBackend;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Where an uncontended PostgreSQL cycle's time goes ({@code JdbcBenchmarks --breakdown}, issue 9):
 * one thread, paired ({@link PairedLatency}), from the floor up to the full API, each step adding
 * one layer, per mode (table, advisory):
 *
 * <ol>
 *   <li>the floor ({@code pg_advisory_lock}/{@code pg_advisory_unlock}, as in the comparison);
 *       beside it, the least any lease table writes ({@link #leastWrite});
 *   <li>the SQL texts latchkey's uncontended path sends, recorded from latchkey once ({@link
 *       RecordedTexts}) and replayed by plain JDBC on one connection: what the database does for a
 *       cycle (the resource row's lock, the holder row, the fencing counter, their WAL), no
 *       latchkey code;
 *   <li>the backend's {@code LockStore} called directly on the caller's thread (a direct executor
 *       in the {@link BackendContext}): adds latchkey-jdbc's own work (keys, binding, the
 *       connection's settings, the pool);
 *   <li>the same store with its calls on a thread pool as the engine's blocking executor is (a
 *       cached pool), the caller waiting for each: adds the two thread hand-offs per operation;
 *   <li>{@code lock()}/{@code unlock()} of a client: adds the engine (its bookkeeping, the
 *       operation bound, the watchdog's registration).
 * </ol>
 */
final class JdbcBreakdown {
  private static final String TAG = "jdbc-breakdown";
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(5);

  private JdbcBreakdown() {}

  /** A mode of the breakdown: how latchkey is opened in it. */
  private record Mode(String label, JdbcMode mode, String tablePrefix) {
    /** latchkey's options after the server's URL, as the comparison opens it. */
    String options() {
      return "latchkey.createSchema=true&latchkey.mode="
          + label
          + "&latchkey.tablePrefix="
          + tablePrefix;
    }
  }

  // The comparison's tables: the default prefix in table mode, one of its own in advisory mode.
  private static final List<Mode> MODES =
      List.of(
          new Mode("table", JdbcMode.TABLE, "latchkey_"),
          new Mode("advisory", JdbcMode.ADVISORY, "latchkey_advisory_"));

  /**
   * Measures on a server already started and writes the report.
   *
   * @param url the server, with user
   * @param version the server's version, for the report
   * @param settings the paired window ({@code --paired}) and the output directory
   */
  static void run(String url, String version, PeerComparison.Settings settings) throws Exception {
    PeerComparison.Start start = PeerComparison.Start.now();
    List<AutoCloseable> open = new ArrayList<>();
    ScheduledExecutorService scheduler =
        Executors.newSingleThreadScheduledExecutor(daemon("jdbc-breakdown-scheduler"));
    ExecutorService hop = Executors.newCachedThreadPool(daemon("jdbc-breakdown-call"));
    try {
      List<PairedLatency.Variant> variants = new ArrayList<>();
      PeerComparison.Peer floor = JdbcBenchmarks.floor(JdbcBenchmarks.FLOOR, url);
      open.add(floor);
      variants.add(new PairedLatency.Variant(floor.label(), floor.locker(name("floor")).cycle()));
      variants.add(leastWrite(url, open));
      for (Mode mode : MODES) {
        String uri = url + "&" + mode.options();
        variants.add(replayed(url, mode, scheduler, open));
        LatchkeyBackend direct =
            new JdbcBackendProvider()
                .open(URI.create(uri), context("direct", scheduler, Runnable::run));
        open.add(direct);
        variants.add(
            new PairedLatency.Variant(
                "LockStore, caller's thread, " + mode.label(),
                LockClients.spiCycle(direct.locks(), name("direct"), "direct-owner")));
        LatchkeyBackend pooled =
            new JdbcBackendProvider().open(URI.create(uri), context("pooled", scheduler, hop));
        open.add(pooled);
        variants.add(
            new PairedLatency.Variant(
                "LockStore, executor, " + mode.label(),
                LockClients.spiCycle(pooled.locks(), name("pooled"), "pooled-owner")));
        PeerComparison.Peer client =
            PeerComparison.latchkey("lock()/unlock(), " + mode.label(), uri);
        open.add(client);
        variants.add(
            new PairedLatency.Variant(
                "lock()/unlock(), " + mode.label(), client.locker(name("client")).cycle()));
      }
      List<PairedLatency.Latencies> paired =
          PairedLatency.measure(variants, settings.pairedWarmup, settings.pairedWindow);
      String body = table(paired);
      PeerComparison.log(TAG, "\n" + body);
      PeerComparison.finish(
          TAG,
          settings,
          "jdbc-breakdown.md",
          start,
          List.of(
              "PostgreSQL " + version,
              "pgjdbc " + PeerComparison.peerVersion("postgresql"),
              "HikariCP " + RedisBenchmarks.mavenVersion("com.zaxxer", "HikariCP")),
          body);
    } finally {
      for (int i = open.size() - 1; i >= 0; i--) {
        open.get(i).close();
      }
      hop.shutdownNow();
      scheduler.shutdownNow();
    }
  }

  /**
   * The least SQL that any lock keeping its holds in a table sends for a cycle, as a reference: one
   * row per lock holding its owner, lease and fencing counter, taken and given back by one
   * single-row {@code UPDATE} each (the lease and the token by the database's clock), autocommit,
   * on one plain connection. No queue, no re-entry, no owner record beside it: not a lock latchkey
   * offers, but what writing a hold costs on this server against the floor's two calls that write
   * nothing.
   */
  private static PairedLatency.Variant leastWrite(String url, List<AutoCloseable> open)
      throws SQLException {
    Connection connection = DriverManager.getConnection(url);
    open.add(connection);
    String table = "latchkey_bench_least_write";
    String name = name("least-write");
    String owner = "least-write-owner";
    String now = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)";
    try (Statement ddl = connection.createStatement()) {
      ddl.execute(
          "CREATE TABLE IF NOT EXISTS "
              + table
              + " (name VARCHAR(255) PRIMARY KEY, owner VARCHAR(255), fence BIGINT NOT NULL,"
              + " expires_at BIGINT NOT NULL)");
    }
    try (PreparedStatement insert =
        connection.prepareStatement("INSERT INTO " + table + " VALUES (?, NULL, 0, 0)")) {
      insert.setString(1, name);
      insert.executeUpdate();
    }
    String acquire =
        "UPDATE "
            + table
            + " SET owner = ?, fence = GREATEST(fence + 1, "
            + now
            + " * 1000), expires_at = "
            + now
            + " + 30000 WHERE name = ? AND (owner IS NULL OR expires_at <= "
            + now
            + ") RETURNING fence";
    String release =
        "UPDATE " + table + " SET owner = NULL WHERE name = ? AND owner = ? AND fence = ?";
    return new PairedLatency.Variant(
        "one-row UPDATE per operation (reference)",
        () -> {
          long token;
          try (PreparedStatement take = connection.prepareStatement(acquire)) {
            take.setString(1, owner);
            take.setString(2, name);
            try (ResultSet rs = take.executeQuery()) {
              if (!rs.next()) {
                throw new IllegalStateException("the one-row acquire found the row taken");
              }
              token = rs.getLong(1);
            }
          }
          try (PreparedStatement give = connection.prepareStatement(release)) {
            give.setString(1, name);
            give.setString(2, owner);
            give.setLong(3, token);
            if (give.executeUpdate() != 1) {
              throw new IllegalStateException("the one-row release found another holder");
            }
          }
        });
  }

  /**
   * The replay of one mode: a cycle of latchkey's store recorded on a name whose resource row
   * exists (the name's first acquire takes the general path), then those texts sent on one plain
   * connection, the recorded fencing token replaced by the one the replayed acquire answers.
   */
  private static PairedLatency.Variant replayed(
      String url, Mode mode, ScheduledExecutorService scheduler, List<AutoCloseable> open)
      throws Exception {
    String name = name("replayed");
    String owner = "replayed-owner";
    RecordedTexts recorder = new RecordedTexts();
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(2);
    List<RecordedTexts.Text> acquire;
    List<RecordedTexts.Text> release;
    long recordedToken;
    try (HikariDataSource pool = new HikariDataSource(config)) {
      LatchkeyBackend backend =
          JdbcBackend.builder(recorder.wrap(pool))
              .mode(mode.mode())
              .tablePrefix(mode.tablePrefix())
              .createSchema(true)
              .build()
              .open(context("recorder", scheduler, Runnable::run));
      try {
        LockClients.spiCycle(backend.locks(), name, owner).run();
        recorder.start();
        recordedToken =
            backend
                .locks()
                .tryAcquire(LockClients.request(name, owner))
                .toCompletableFuture()
                .join()
                .fencingToken();
        acquire = recorder.stop();
        recorder.start();
        LockClients.release(backend.locks(), name, owner, recordedToken);
        release = recorder.stop();
      } finally {
        backend.close();
      }
    }
    PeerComparison.log(
        TAG,
        mode.label()
            + ": replaying "
            + acquire.size()
            + " + "
            + release.size()
            + " texts: "
            + acquire.stream().map(RecordedTexts.Text::sql).toList()
            + " / "
            + release.stream().map(RecordedTexts.Text::sql).toList());
    Connection connection = DriverManager.getConnection(url);
    open.add(connection);
    connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    connection.setAutoCommit(false);
    return new PairedLatency.Variant(
        "SQL replayed, " + mode.label(),
        () -> {
          long token = RecordedTexts.replay(connection, acquire, recordedToken, -1);
          if (token < 0) {
            throw new IllegalStateException("the replayed acquire granted nothing");
          }
          if (RecordedTexts.replay(connection, release, recordedToken, token) < 0) {
            throw new IllegalStateException("the replayed release deleted no holder row");
          }
        });
  }

  private static String table(List<PairedLatency.Latencies> paired) {
    StringBuilder out =
        new StringBuilder(
            "#### Uncontended cycle, paired, one layer added per step\n\n"
                + "| step | cycles | p50 µs | mean µs | p99 µs | p50 added by this step µs |"
                + " mean added µs |\n|---|---:|---:|---:|---:|---:|---:|\n");
    PairedLatency.Latencies floor = paired.get(0);
    PairedLatency.Latencies previous = floor;
    for (PairedLatency.Latencies l : paired) {
      if (l.label().startsWith("SQL replayed")) {
        previous = floor;
      }
      boolean first = l == floor;
      out.append(
          String.format(
              Locale.ROOT,
              "| %s | %,d | %.1f | %.1f | %.1f | %s | %s |%n",
              l.label(),
              l.count(),
              l.percentileMicros(0.5),
              l.meanMicros(),
              l.percentileMicros(0.99),
              first
                  ? "-"
                  : String.format(
                      Locale.ROOT,
                      "%+.1f",
                      l.percentileMicros(0.5) - previous.percentileMicros(0.5)),
              first
                  ? "-"
                  : String.format(Locale.ROOT, "%+.1f", l.meanMicros() - previous.meanMicros())));
      previous = l;
    }
    return out.toString();
  }

  private static BackendContext context(
      String client, ScheduledExecutorService scheduler, Executor executor) {
    return new BackendContext(
        "bench-" + client + "-" + System.nanoTime(),
        OPERATION_TIMEOUT,
        LockClients.DEFAULT_WATCHDOG_LEASE,
        scheduler,
        executor,
        GrantEvents.NONE);
  }

  private static String name(String step) {
    return TAG + "-" + step + "-" + System.nanoTime();
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return runnable -> {
      Thread thread = new Thread(runnable, name);
      thread.setDaemon(true);
      return thread;
    };
  }
}
