package io.latchkey.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code latchkey} command: dispatches to its subcommands. */
@Command(
    name = "latchkey",
    mixinStandardHelpOptions = true,
    version = "latchkey 0.1.0-SNAPSHOT",
    description = "Distributed locks: a flash-sale demo and tools for the locks of a backend.",
    subcommands = {DemoCommand.class, CommandLine.HelpCommand.class})
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
          return ExitCodes.FAILURE;
        });
    return cli;
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }
}
