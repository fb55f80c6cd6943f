package io.latchkey.internal;

import io.latchkey.Primitive;
import io.latchkey.Ticker;
import io.latchkey.spi.GrantRef;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.spi.RenewResult;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.ObjIntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watchdog: one periodic pass per client renews every grant taken without an explicit lease, in
 * batches of {@code renewBatchSize} grants per backend call.
 *
 * <p>A grant the backend reports as gone is lost at once (unless a release of it is on its way: the
 * release's answer decides). When a renewal call, or a shard of it, fails, the grants stay valid as
 * long as their last confirmed lease lasts: each grant's lease timer in {@link GrantLedger} reports
 * it lost at that moment. The lease is counted from the moment the renewal was sent, so this client
 * never believes in a lease longer than the backend's.
 */
final class LeaseRenewer {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseRenewer.class);

  private final GrantLedger ledger;
  private final LatchkeyBackend backend;
  private final BackendCalls calls;
  private final Ticker ticker;
  private final long leaseMillis;
  private final int batchSize;
  private final ScheduledFuture<?> task;
  private final Observing observing;

  LeaseRenewer(
      GrantLedger ledger,
      LatchkeyBackend backend,
      BackendCalls calls,
      ScheduledExecutorService scheduler,
      io.latchkey.LatchkeyOptions options,
      Observing observing) {
    this.observing = observing;
    this.ledger = ledger;
    this.backend = backend;
    this.calls = calls;
    this.ticker = options.ticker();
    this.leaseMillis = options.leaseTime().toMillis();
    this.batchSize = options.renewBatchSize();
    long period = options.renewInterval().toNanos();
    this.task = scheduler.scheduleAtFixedRate(this::renewAll, period, period, TimeUnit.NANOSECONDS);
  }

  /**
   * One pass: the grants are grouped by the backend's renewal shard and sent in batches, one call
   * per batch, each answered on its own. A grant whose previous renewal is still on its way (a slow
   * shard) is left out of this pass; the others are renewed as usual.
   */
  void renewAll() {
    Map<String, List<Hold>> byShard = new LinkedHashMap<>();
    for (Hold hold : ledger.renewable()) {
      if (hold.startRenewal()) {
        ledger.renewalStarting(hold);
        byShard
            .computeIfAbsent(backend.renewalShard(hold.grant()), shard -> new ArrayList<>())
            .add(hold);
      }
    }
    for (List<Hold> shard : byShard.values()) {
      for (int from = 0; from < shard.size(); from += batchSize) {
        renewBatch(shard.subList(from, Math.min(shard.size(), from + batchSize)));
      }
    }
  }

  @SuppressWarnings("FutureReturnValueIgnored") // the handler deals with every outcome itself
  private void renewBatch(List<Hold> batch) {
    Map<GrantRef, Hold> byGrant = new HashMap<>();
    for (Hold hold : batch) {
      byGrant.put(hold.grant(), hold);
    }
    long sentAt = ticker.nanoTime();
    calls
        .call(
            () -> "renew " + byGrant.size() + " leases",
            () -> backend.renew(List.copyOf(byGrant.keySet()), leaseMillis))
        .whenComplete(
            (answer, failure) -> {
              byGrant.values().forEach(Hold::renewalAnswered);
              if (failure == null) {
                confirm(byGrant, answer, sentAt);
              } else {
                LOG.warn("renewing leases on {} failed: {}", calls.backend(), failure.toString());
                report(byGrant.values(), observing::renewalFailed);
              }
              byGrant.values().forEach(ledger::renewalSettled);
            });
  }

  private void confirm(Map<GrantRef, Hold> byGrant, RenewResult answer, long sentAt) {
    long validForNanos =
        answer.validForMillis() < 0 ? -1 : TimeUnit.MILLISECONDS.toNanos(answer.validForMillis());
    if (!answer.failed().isEmpty()) {
      LOG.warn(
          "renewing {} leases on {} failed: {}",
          answer.failed().size(),
          calls.backend(),
          answer.failed().values().iterator().next().toString());
    }
    List<Hold> renewed = new ArrayList<>();
    List<Hold> failed = new ArrayList<>();
    for (Map.Entry<GrantRef, Hold> entry : byGrant.entrySet()) {
      Hold hold = entry.getValue();
      if (answer.gone().contains(entry.getKey())) {
        ledger.goneAtRenewal(hold);
      } else if (answer.failed().containsKey(entry.getKey())) {
        failed.add(hold);
      } else {
        ledger.renewed(hold, sentAt, validForNanos);
        renewed.add(hold);
      }
    }
    report(renewed, observing::renewed);
    report(failed, observing::renewalFailed);
  }

  /** Tells an observer how many leases of each primitive an outcome concerned. */
  private static void report(Collection<Hold> holds, ObjIntConsumer<Primitive> event) {
    if (holds.isEmpty()) {
      return;
    }
    Map<Primitive, Integer> counts = new EnumMap<>(Primitive.class);
    for (Hold hold : holds) {
      counts.merge(hold.primitive(), 1, Integer::sum);
    }
    counts.forEach(event::accept);
  }

  void stop() {
    task.cancel(false);
  }
}
