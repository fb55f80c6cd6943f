package io.latchkey.cli;

import io.latchkey.Latchkey;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code latchkey unlock --force NAME}: frees a lock whoever holds it. */
@Command(
    name = "unlock",
    mixinStandardHelpOptions = true,
    header = "Frees a lock whoever holds it (--force).",
    description =
        "Frees a lock whoever holds it, in every mode, and wakes its waiters. The owner "
            + "that lost it is told (its lease is lost) when its watchdog or unlock next talks "
            + "to the backend.")
final class UnlockCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin BackendOption backend;

  @Parameters(index = "0", paramLabel = "NAME", description = "The lock name.")
  String name;

  @Option(
      names = "--force",
      description = "Required: confirms that the lock is taken from whoever holds it.")
  boolean force;

  @Override
  public Integer call() {
    if (!force) {
      throw new ParameterException(
          spec.commandLine(), "unlock takes a lock from its owner: add --force");
    }
    String uri = backend.shared();
    PrintWriter out = spec.commandLine().getOut();
    try (Latchkey latchkey = BackendOption.connect(uri)) {
      List<String> holders = LockView.of(latchkey, name).describeHolders();
      if (latchkey.admin().forceRelease(name)) {
        out.println(
            "Released '"
                + name
                + "'"
                + (holders.isEmpty() ? "" : ", held by " + String.join("; ", holders))
                + ".");
      } else {
        out.println("Lock '" + name + "' was not held.");
      }
    }
    out.flush();
    return ExitCodes.OK;
  }
}
