package io.latchkey.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code latchkey} command: the flash-sale demo, {@code exec} under a lock, and the lock
 * monitor ({@code ls}, {@code inspect}, {@code unlock}, {@code revoke}, {@code reap}). Errors are
 * one line on standard error starting with {@code latchkey:}, never a stack trace; exit codes are
 * listed in {@code --help}.
 */
@Command(
    name = "latchkey",
    mixinStandardHelpOptions = true,
    version = "latchkey 0.1.0-SNAPSHOT",
    description =
        "Distributed locks: a flash-sale demo, commands under a lock, and a lock monitor.",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:success",
      "1:failure (backend unreachable, bad backend URI, ...)",
      "2:bad usage",
    },
    footer = {
      "",
      "exec has exit codes of its own: latchkey exec --help.",
      "Every command but demo needs a shared backend: --backend URI or LATCHKEY_URL,",
      "e.g. redis://localhost:6379. Durations are like 500ms, 30s, 2m, 1h."
    },
    subcommands = {
      DemoCommand.class,
      ExecCommand.class,
      LsCommand.class,
      InspectCommand.class,
      UnlockCommand.class,
      RevokeCommand.class,
      ReapCommand.class,
      DemoWorkerCommand.class,
      CommandLine.HelpCommand.class
    })
public final class LatchkeyCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /**
   * Runs the command line and exits with its code.
   *
   * @param args the arguments
   */
  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /**
   * @return the command line, with latchkey's error handling: one line per error, no stack trace
   */
  static CommandLine commandLine() {
    CommandLine cli = new CommandLine(new LatchkeyCommand());
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          commandLine.getErr().println("latchkey: " + OneLineErrors.describe(e));
          return failureCode(commandLine, ExitCodes.FAILURE);
        });
    cli.setParameterExceptionHandler(
        (e, args) -> {
          CommandLine commandLine = e.getCommandLine();
          commandLine
              .getErr()
              .println(
                  "latchkey: "
                      + OneLineErrors.firstLine(String.valueOf(e.getMessage()))
                      + " (see '"
                      + commandLine.getCommandSpec().qualifiedName()
                      + " --help')");
          return failureCode(commandLine, ExitCodes.USAGE);
        });
    return cli;
  }

  /** {@code exec} passes on its command's codes, so its own failures have a code of their own. */
  private static int failureCode(CommandLine commandLine, int code) {
    return commandLine.getCommand() instanceof ExecCommand ? ExitCodes.EXEC_FAILED : code;
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }
}
