package io.latchkey.cli;

import io.latchkey.Feature;
import io.latchkey.HolderInfo;
import io.latchkey.Latchkey;
import io.latchkey.LockInfo;
import io.latchkey.UnsupportedFeatureException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code latchkey reap}: evicts the holders whose client is dead (has no presence record) and whose
 * lease would keep the lock for long. A client's presence record outlives its watchdog lease, so
 * the locks this finds were taken with an explicit lease time.
 */
@Command(
    name = "reap",
    mixinStandardHelpOptions = true,
    header = "Evicts the long leases of holders whose client is dead.",
    description =
        "Evicts lock holders whose client is dead (no live presence record) and whose "
            + "lease has at least --min-lease left, so that a crashed holder with a long lease "
            + "does not stall the others. Holders of live clients are never touched. Prints "
            + "what it evicted.")
final class ReapCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin BackendOption backend;

  @Option(names = "--dry-run", description = "Print what would be evicted, evict nothing.")
  boolean dryRun;

  @Option(
      names = "--min-lease",
      paramLabel = "D",
      defaultValue = "10s",
      converter = Durations.class,
      description =
          "Leave dead holders alone whose lease runs out sooner than this anyway (default:"
              + " ${DEFAULT-VALUE}).")
  Duration minLease;

  @Override
  public Integer call() {
    String uri = backend.shared();
    PrintWriter out = spec.commandLine().getOut();
    try (Latchkey latchkey = BackendOption.connect(uri)) {
      if (!latchkey.features().contains(Feature.PRESENCE)) {
        // Without presence records every holder would look dead.
        throw new UnsupportedFeatureException(Feature.PRESENCE, latchkey.backendDescription());
      }
      LockView view = LockView.all(latchkey);
      Table table = new Table("lock", "owner", "client", "mode", "lease left", "action");
      int reaped = 0;
      int live = 0;
      int expiring = 0;
      for (LockInfo lock : view.locks()) {
        for (HolderInfo holder : lock.holders()) {
          if (Boolean.TRUE.equals(view.alive(holder))) {
            live++;
          } else if (holder.remainingLease().compareTo(minLease) < 0) {
            expiring++;
          } else {
            boolean removed = dryRun || latchkey.admin().evict(lock.name(), holder.owner());
            String action = dryRun ? "would evict" : removed ? "evicted" : "gone already";
            if (removed) {
              reaped++;
            }
            table.row(
                lock.name(),
                LockView.ownerLabel(holder),
                LockView.shortId(holder.clientId()),
                LockView.mode(holder),
                Durations.format(holder.remainingLease()),
                action);
          }
        }
      }
      if (table.rows() > 0) {
        table.print(out);
      }
      out.printf(
          "%s %d holder%s of dead clients; left alone: %d of live clients, %d with less than %s"
              + " of lease left.%n",
          dryRun ? "Would evict" : "Evicted",
          reaped,
          reaped == 1 ? "" : "s",
          live,
          expiring,
          Durations.format(minLease));
    }
    out.flush();
    return ExitCodes.OK;
  }
}
