package io.latchkey.jdbc;

import io.latchkey.Feature;
import io.latchkey.spi.FenceStore;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.WakeupBus;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What the backends of every mode share: the settings they were opened with, what they offer, the
 * wake-up channel (closed by the subclass with the rest), and the fence store of a quorum member
 * (every mode counts its tokens up in the same resource rows).
 */
abstract class JdbcModeBackend implements LatchkeyBackend {
  final JdbcBackend.Settings settings;
  final JdbcWakeups wakeups;
  private final Set<Feature> features;
  private final FenceStore fences;

  /**
   * @param settings what the backend was opened with
   * @param features what it offers
   * @param listenerConnections opens PostgreSQL's listening connection
   * @param transactions the transactions on the backend's pool: they poll for wake-ups (not
   *     PostgreSQL) and keep the fences
   * @param scheduler times the polls
   */
  JdbcModeBackend(
      JdbcBackend.Settings settings,
      Set<Feature> features,
      PostgresWakeups.Opener listenerConnections,
      Transactions transactions,
      ScheduledExecutorService scheduler) {
    this.settings = settings;
    this.features = features;
    Sql sql = new Sql(transactions.schema(), settings.dialect(), transactions.multiStatements());
    this.wakeups = new JdbcWakeups(settings, listenerConnections, transactions, sql, scheduler);
    this.fences = new TableFenceStore(transactions, sql);
  }

  @Override
  public final String description() {
    return settings.description();
  }

  @Override
  public final String identity() {
    return settings.identity();
  }

  @Override
  public final Set<Feature> features() {
    return features;
  }

  @Override
  public final Optional<FenceStore> fences() {
    return Optional.of(fences);
  }

  @Override
  public final WakeupBus wakeups() {
    return wakeups.bus();
  }
}
