package io.latchkey.cli;

import io.latchkey.ClientInfo;
import io.latchkey.HolderInfo;
import io.latchkey.Latchkey;
import io.latchkey.LockInfo;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code latchkey inspect NAME}: the lock of that name in detail, held or not; and the semaphore,
 * leased semaphore and latch of that name, where they exist and the backend can show them.
 */
@Command(
    name = "inspect",
    mixinStandardHelpOptions = true,
    header = "Shows one lock (and the semaphores or latch of that name) in detail.",
    description =
        "Shows one lock: whether it is held, its waiters, and for each holder the owner, "
            + "mode, holds, lease left, fencing token and client (full id, host, pid, start, "
            + "alive). Then the semaphore, leased semaphore (with each granted permit) and "
            + "latch of that name, those that exist, on backends that can inspect them "
            + "(memory, Redis); on the others it says that they are not shown.")
final class InspectCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin BackendOption backend;

  @Parameters(
      index = "0",
      paramLabel = "NAME",
      description = "The name of the lock (or semaphore, leased semaphore, latch).")
  String name;

  @Option(names = "--json", description = "Print JSON for scripts instead of text.")
  boolean json;

  @Override
  public Integer call() {
    String uri = backend.shared();
    PrintWriter out = spec.commandLine().getOut();
    try (Latchkey latchkey = BackendOption.connect(uri)) {
      LockView view = LockView.of(latchkey, name);
      SynchronizerView synchronizers = SynchronizerView.named(latchkey, name);
      LockInfo lock =
          view.locks().isEmpty() ? new LockInfo(name, List.of(), 0) : view.locks().get(0);
      if (json) {
        Map<String, @Nullable Object> document = new LinkedHashMap<>(view.json(lock));
        synchronizers.putOne(document, view);
        out.println(Json.write(document));
      } else {
        boolean showLock = !lock.holders().isEmpty() || synchronizers.isEmpty();
        if (showLock) {
          print(out, view, lock);
        }
        if (!synchronizers.inspected()) {
          out.println(SynchronizerView.cannotInspect(latchkey));
        } else if (synchronizers.isEmpty()) {
          out.println("No semaphore, leased semaphore or latch is named '" + name + "'.");
        } else {
          synchronizers.printDetail(out, view, showLock);
        }
      }
    }
    out.flush();
    return ExitCodes.OK;
  }

  private static void print(PrintWriter out, LockView view, LockInfo lock) {
    if (lock.holders().isEmpty()) {
      out.println("Lock '" + lock.name() + "' is not held.");
      return;
    }
    Table table = new Table("lock", lock.name());
    table.row("waiters", Integer.toString(lock.queuedWaiters()));
    int index = 0;
    for (HolderInfo holder : lock.holders()) {
      index++;
      Optional<ClientInfo> client = view.client(holder);
      table.row("holder", index + " of " + lock.holders().size());
      table.row("  owner", LockView.ownerLabel(holder));
      table.row("  mode", LockView.mode(holder));
      table.row("  holds", Integer.toString(holder.holds()));
      table.row("  lease left", Durations.format(holder.remainingLease()));
      table.row("  fencing token", Long.toString(holder.fencingToken()));
      table.row("  client", holder.clientId());
      table.row("  alive", LockView.aliveLabel(view.alive(holder)));
      if (client.isPresent()) {
        table.row("  host", client.get().host());
        table.row("  pid", Long.toString(client.get().pid()));
        table.row("  client since", client.get().startedAt().toString());
      }
    }
    table.print(out);
  }
}
