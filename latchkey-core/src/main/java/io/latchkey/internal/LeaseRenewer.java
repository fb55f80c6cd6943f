package io.latchkey.internal;

import io.latchkey.LeaseLostException;
import io.latchkey.Ticker;
import io.latchkey.spi.HolderRef;
import io.latchkey.spi.LatchkeyBackend;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watchdog: one periodic pass per client renews every hold taken without an explicit lease, in
 * batches of {@code renewBatchSize} holders per backend call.
 *
 * <p>A holder the backend reports as gone is lost at once. When a renewal call fails (backend down,
 * timeout), the holds stay valid as long as their last confirmed lease lasts; a hold whose lease
 * has run out by this client's clock without a confirmed renewal is lost. The lease is counted from
 * the moment the renewal was sent, so this client never believes in a lease longer than the
 * backend's.
 */
final class LeaseRenewer {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseRenewer.class);

  private final LatchkeyClient client;
  private final HoldRegistry holds;
  private final LatchkeyBackend backend;
  private final BackendCalls calls;
  private final Ticker ticker;
  private final long leaseMillis;
  private final int batchSize;
  private final AtomicBoolean passInFlight = new AtomicBoolean();
  private final ScheduledFuture<?> task;

  LeaseRenewer(
      LatchkeyClient client,
      HoldRegistry holds,
      LatchkeyBackend backend,
      BackendCalls calls,
      ScheduledExecutorService scheduler) {
    this.client = client;
    this.holds = holds;
    this.backend = backend;
    this.calls = calls;
    this.ticker = client.options().ticker();
    this.leaseMillis = client.options().leaseTime().toMillis();
    this.batchSize = client.options().renewBatchSize();
    long period = client.options().renewInterval().toNanos();
    this.task = scheduler.scheduleAtFixedRate(this::renewAll, period, period, TimeUnit.NANOSECONDS);
  }

  /** One pass; skipped if the previous pass has not finished (a slow backend). */
  // Handler futures left unread on purpose: each batch handles its own failure (renewBatch); the
  // handler only ends the pass.
  @SuppressWarnings("FutureReturnValueIgnored")
  void renewAll() {
    List<Hold> renewable = holds.renewable();
    if (renewable.isEmpty() || !passInFlight.compareAndSet(false, true)) {
      return;
    }
    List<CompletableFuture<Void>> batches = new ArrayList<>();
    for (int from = 0; from < renewable.size(); from += batchSize) {
      batches.add(
          renewBatch(renewable.subList(from, Math.min(renewable.size(), from + batchSize))));
    }
    CompletableFuture.allOf(batches.toArray(CompletableFuture[]::new))
        .whenComplete((ok, failure) -> passInFlight.set(false));
  }

  private CompletableFuture<Void> renewBatch(List<Hold> batch) {
    Map<HolderRef, Hold> byRef = new HashMap<>();
    for (Hold hold : batch) {
      byRef.put(hold.ref, hold);
    }
    long sentAt = ticker.nanoTime();
    return calls
        .call(
            () -> "renew " + byRef.size() + " leases",
            () -> backend.renew(List.copyOf(byRef.keySet()), leaseMillis))
        .handle(
            (gone, failure) -> {
              if (failure == null) {
                confirm(byRef, gone, sentAt);
              } else {
                expireUnconfirmed(byRef.values(), failure);
              }
              return null;
            });
  }

  private void confirm(Map<HolderRef, Hold> byRef, Set<HolderRef> gone, long sentAt) {
    for (Map.Entry<HolderRef, Hold> entry : byRef.entrySet()) {
      Hold hold = entry.getValue();
      if (gone.contains(entry.getKey())) {
        client.markLost(
            hold,
            new LeaseLostException(
                client.describe(hold)
                    + " was lost: the backend no longer knows it (its lease expired, or it was"
                    + " force-released)",
                null));
      } else {
        hold.renewed(sentAt);
      }
    }
  }

  private void expireUnconfirmed(Iterable<Hold> batch, Throwable failure) {
    LOG.warn("renewing leases on {} failed: {}", calls.backend(), failure.toString());
    long now = ticker.nanoTime();
    for (Hold hold : batch) {
      if (now - hold.validUntilNanos() >= 0) {
        client.markLost(
            hold,
            new LeaseLostException(
                client.describe(hold) + " was lost: renewal kept failing until its lease ran out",
                BackendCalls.unwrap(failure)));
      }
    }
  }

  void stop() {
    task.cancel(false);
  }
}
