package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What goes wrong gives one line on standard error, starting with {@code latchkey:}, and a non-zero
 * exit; never a stack trace, never a hang.
 */
class ErrorsIT {
  @Test
  void noBackendIsAUsageError() {
    Cli.Result result = Cli.run("ls");

    assertOneLineError(result, ExitCodes.USAGE);
    assertThat(result.stderr())
        .isEqualTo(
            "latchkey: no backend: give --backend URI or set LATCHKEY_URL, e.g."
                + " redis://localhost:6379 (see 'latchkey ls --help')\n");
  }

  @Test
  void theInProcessBackendIsRefusedWhereOtherProcessesMustSeeTheLocks() {
    Cli.Result result = Cli.run("inspect", "x", "--backend", "memory:");

    assertOneLineError(result, ExitCodes.USAGE);
    assertThat(result.stderr()).contains("'memory:' is an in-process backend");
    Cli.Result h2 = Cli.run("ls", "--backend", "jdbc:h2:mem:locks");
    assertOneLineError(h2, ExitCodes.USAGE);
    assertThat(h2.stderr()).contains("'jdbc:h2:mem:locks' is an in-process backend");
  }

  @Test
  void theDemosServerKeywordsAreRefusedWhereAServerMustRunAlready() {
    Cli.Result result = Cli.run("ls", "--backend", "postgres");

    assertOneLineError(result, ExitCodes.USAGE);
    assertThat(result.stderr())
        .startsWith("latchkey: 'postgres' names a server that only the demo starts for itself");
  }

  @Test
  void aMalformedUriSaysWhatIsWrong() {
    Cli.Result result = Cli.run("ls", "--backend", "redis://[oops");

    assertOneLineError(result, ExitCodes.FAILURE);
    assertThat(result.stderr()).startsWith("latchkey: malformed backend URI 'redis://[oops'");
  }

  @Test
  void anUnknownSchemeNamesTheScheme() {
    Cli.Result result = Cli.run("reap", "--backend", "postgres://db/locks");

    assertOneLineError(result, ExitCodes.FAILURE);
    assertThat(result.stderr()).contains("no latchkey backend on the class path takes 'postgres:'");
  }

  @Test
  void anUnreachableServerFailsFast() throws IOException {
    String uri = "redis://127.0.0.1:" + closedPort();

    Cli.Result ls = Cli.run("ls", "--backend", uri);
    assertOneLineError(ls, ExitCodes.FAILURE);
    assertThat(ls.stderr()).startsWith("latchkey: cannot connect to " + uri);
    assertThat(ls.took()).isLessThan(Duration.ofSeconds(20));

    Cli.Result fromEnvironment =
        Cli.run(Map.of(BackendOption.ENVIRONMENT_VARIABLE, uri), "unlock", "--force", "x");
    assertOneLineError(fromEnvironment, ExitCodes.FAILURE);
    assertThat(fromEnvironment.stderr()).startsWith("latchkey: cannot connect to " + uri);

    Cli.Result exec = Cli.run("exec", "x", "--backend", uri, "--", "echo", "never ran");
    assertOneLineError(exec, ExitCodes.EXEC_FAILED);
    assertThat(exec.stdout()).isEmpty();
  }

  @Test
  void badOptionsAreOneLineUsageErrors() {
    assertOneLineError(Cli.run("ls", "--nope"), ExitCodes.USAGE);
    assertOneLineError(Cli.run("no-such-command"), ExitCodes.USAGE);
    Cli.Result badDuration = Cli.run("reap", "--min-lease", "10", "--backend", "redis://h");
    assertOneLineError(badDuration, ExitCodes.USAGE);
    assertThat(badDuration.stderr()).contains("'10' is not a duration");
    Cli.Result badSignal =
        Cli.run("exec", "x", "--signal", "NOPE", "--backend", "redis://h", "--", "true");
    assertOneLineError(badSignal, ExitCodes.EXEC_FAILED);
    assertOneLineError(
        Cli.run(
            "exec",
            "x",
            "--lease",
            "1s",
            "--watchdog-lease",
            "1s",
            "--backend",
            "redis://h",
            "--",
            "true"),
        ExitCodes.EXEC_FAILED);
  }

  @Test
  void helpListsEveryCommandAndTheExitCodes() {
    Cli.Result help = Cli.run("--help");
    assertThat(help.exitCode()).isZero();
    assertThat(help.stdout()).contains("demo", "exec", "ls", "inspect", "unlock", "reap");
    assertThat(help.stdout()).doesNotContain("demo-worker");

    Cli.Result exec = Cli.run("exec", "--help");
    assertThat(exec.stdout())
        .containsPattern("75 +the lock was not had within --wait")
        .containsPattern("76 +the lease was lost while CMD ran")
        .containsPattern("125 +latchkey failed")
        .containsPattern("126 +CMD could not be started")
        .containsPattern("127 +CMD was not found");
  }

  private static void assertOneLineError(Cli.Result result, int exitCode) {
    assertThat(result.exitCode()).as(result.describe()).isEqualTo(exitCode);
    assertThat(result.stderr()).as(result.describe()).startsWith("latchkey: ").hasLineCount(1);
    assertThat(result.stderr()).doesNotContain("Exception", "\tat ");
  }

  /** A loopback port nobody listens on (it was free a moment ago). */
  private static int closedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
