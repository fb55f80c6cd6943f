package io.latchkey.cli;

import io.latchkey.Latchkey;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code latchkey revoke NAME}: asks the holders of a lock to give it up. */
@Command(
    name = "revoke",
    mixinStandardHelpOptions = true,
    header = "Asks the holders of a lock to give it up (cooperative revocation).",
    description =
        "Sends every holder of the lock a revocation request. Holders that registered a handler"
            + " (Lease.onRevocationRequested) decide what to do, typically finish their work and"
            + " release; nothing is taken from a holder that ignores the request (use 'unlock"
            + " --force' for that). The leader of an election of that name steps down. Needs a"
            + " backend with cooperative revocation (memory, Redis).")
final class RevokeCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin BackendOption backend;

  @Parameters(index = "0", paramLabel = "NAME", description = "The lock name.")
  String name;

  @Override
  public Integer call() {
    String uri = backend.shared();
    PrintWriter out = spec.commandLine().getOut();
    try (Latchkey latchkey = BackendOption.connect(uri)) {
      List<String> holders = LockView.of(latchkey, name).describeHolders();
      if (latchkey.lock(name).requestRevocation()) {
        out.println(
            "Asked the holders of '"
                + name
                + "' to give it up"
                + (holders.isEmpty() ? "" : ": " + String.join("; ", holders))
                + ".");
      } else {
        out.println("Lock '" + name + "' is not held: nobody to ask.");
      }
    }
    out.flush();
    return ExitCodes.OK;
  }
}
