package io.latchkey.cli;

import io.latchkey.Latchkey;
import io.latchkey.LockInfo;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code latchkey ls}: every held lock, its holders, their clients and whether those are alive;
 * and, where the backend can show them, every semaphore, leased semaphore and latch.
 */
@Command(
    name = "ls",
    mixinStandardHelpOptions = true,
    header =
        "Lists the held locks, their holders, and whether the holders are alive; and the"
            + " semaphores, leased semaphores and latches.",
    description =
        "Lists the held locks: owner (client, host, pid, thread), mode, holds, lease "
            + "left, fencing token, waiters, and whether the owner's client is alive (has a "
            + "presence record). Then the semaphores (available permits), leased semaphores "
            + "(total, available, and each granted permit with its lease and client) and "
            + "latches (count), on backends that can inspect them (memory, Redis); on the "
            + "others it says that they are not shown.")
final class LsCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin BackendOption backend;

  @Option(names = "--json", description = "Print JSON for scripts instead of a table.")
  boolean json;

  @Override
  public Integer call() {
    String uri = backend.shared();
    PrintWriter out = spec.commandLine().getOut();
    try (Latchkey latchkey = BackendOption.connect(uri)) {
      LockView view = LockView.all(latchkey);
      SynchronizerView synchronizers = SynchronizerView.all(latchkey);
      if (json) {
        List<Object> locks = new ArrayList<>();
        for (LockInfo lock : view.locks()) {
          locks.add(view.json(lock));
        }
        Map<String, @Nullable Object> document = new LinkedHashMap<>();
        document.put("backend", latchkey.backendDescription());
        document.put("locks", locks);
        synchronizers.putLists(document, view);
        out.println(Json.write(document));
      } else {
        if (view.locks().isEmpty()) {
          out.println("No locks are held on " + latchkey.backendDescription() + ".");
        } else {
          view.table().print(out);
        }
        if (synchronizers.inspected()) {
          synchronizers.printTables(out, view);
        } else {
          out.println();
          out.println(SynchronizerView.cannotInspect(latchkey));
        }
      }
    }
    out.flush();
    return ExitCodes.OK;
  }
}
