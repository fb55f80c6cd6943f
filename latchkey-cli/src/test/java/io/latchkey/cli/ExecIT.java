package io.latchkey.cli;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.LockInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code latchkey exec} as a process against a Redis the test starts, with real commands. */
class ExecIT {
  private static final Duration EXEC_TIMEOUT = Duration.ofSeconds(60);

  private static @Nullable RedisForTests redis;

  @TempDir Path directory;

  private String uri = "";
  private @Nullable Latchkey client;
  private @Nullable Process exec;

  @BeforeAll
  static void startRedis() {
    redis = new RedisForTests();
  }

  @AfterAll
  static void stopRedis() {
    if (redis != null) {
      redis.close();
    }
  }

  @BeforeEach
  void freshPrefix() {
    if (redis == null) {
      throw new IllegalStateException("Redis was not started");
    }
    uri = redis.freshUri();
    client = redis.client(uri);
  }

  @AfterEach
  void stopExec() {
    if (exec != null) {
      Cli.kill(exec);
    }
  }

  private Latchkey client() {
    if (client == null) {
      throw new IllegalStateException("no client");
    }
    return client;
  }

  @Test
  void runsTheCommandWithTheLockAndPassesOnItsExitCode() {
    assertRunsTheCommandWithTheLock(uri, client());
  }

  /** Shared with the other backends' tests: exec runs a command with the lock, then releases it. */
  static void assertRunsTheCommandWithTheLock(String uri, Latchkey client) {
    Cli.Result result =
        Cli.run(
            "exec",
            "jobs/nightly",
            "--backend",
            uri,
            "--",
            "sh",
            "-c",
            "echo \"$LATCHKEY_LOCK $LATCHKEY_FENCING_TOKEN\"; exit 7");

    assertThat(result.exitCode()).as(result.describe()).isEqualTo(7);
    assertThat(result.stdout()).matches("jobs/nightly \\d+\n");
    assertThat(result.stderr()).isEmpty();
    assertThat(client.admin().inspect("jobs/nightly")).isEmpty();
  }

  @Test
  void holdsTheLockWhileTheCommandRunsAndReleasesItAfter() throws Exception {
    Path go = directory.resolve("go");
    exec =
        startExec(
            "jobs/held", "--", "sh", "-c", "while [ ! -f '" + go + "' ]; do sleep 0.05; done");

    Optional<LockInfo> held = awaitHeld("jobs/held");
    long token = held.orElseThrow().holders().get(0).fencingToken();
    assertThat(client().admin().clients())
        .anySatisfy(
            c -> assertThat(c.clientId()).isEqualTo(held.get().holders().get(0).clientId()));
    Cli.Result busy = Cli.run("exec", "jobs/held", "--backend", uri, "--", "true");
    assertThat(busy.exitCode()).as(busy.describe()).isEqualTo(ExitCodes.LOCK_TIMEOUT);

    Files.writeString(go, "");
    assertThat(awaitExit(exec)).isZero();
    assertThat(client().admin().inspect("jobs/held")).isEmpty();
    Cli.Result next =
        Cli.run(
            "exec",
            "jobs/held",
            "--backend",
            uri,
            "--",
            "sh",
            "-c",
            "echo $LATCHKEY_FENCING_TOKEN");
    assertThat(Long.parseLong(next.stdout().strip())).isGreaterThan(token);
  }

  @Test
  void exitsWithItsOwnCodeWhenTheLockIsNotHadInTime() throws Exception {
    Lease lease = client().lock("jobs/busy").acquire(Duration.ZERO);

    Cli.Result result =
        Cli.run(
            "exec", "jobs/busy", "--wait", "300ms", "--backend", uri, "--", "echo", "never ran");

    assertThat(result.exitCode()).as(result.describe()).isEqualTo(ExitCodes.LOCK_TIMEOUT);
    assertThat(result.stdout()).isEmpty();
    assertThat(result.stderr()).startsWith("latchkey: ").contains("jobs/busy").hasLineCount(1);
    assertThat(result.took()).isGreaterThanOrEqualTo(Duration.ofMillis(300));
    lease.release();
  }

  @Test
  void signalsTheCommandWhenTheLeaseIsForceReleasedAndExitsWithTheLeaseLostCode() throws Exception {
    Path marker = directory.resolve("marker");
    Path child = directory.resolve("child");
    exec =
        startExec(
            "jobs/lost",
            "--watchdog-lease",
            "3s",
            "--",
            "sh",
            "-c",
            "trap 'echo TERM > "
                + marker
                + "; exit 143' TERM; sleep 60 & echo $! > "
                + child
                + "; wait");
    awaitHeld("jobs/lost");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> Files.exists(child) && Files.size(child) > 0);
    long grandchild = Long.parseLong(Files.readString(child).strip());

    assertThat(client().admin().forceRelease("jobs/lost")).isTrue();

    assertThat(awaitExit(exec)).isEqualTo(ExitCodes.LEASE_LOST);
    assertThat(Files.readString(marker, UTF_8)).isEqualTo("TERM\n");
    assertThat(ProcessHandle.of(grandchild).filter(ProcessHandle::isAlive)).isEmpty();
    assertThat(Files.readString(directory.resolve("stderr"), UTF_8))
        .startsWith("latchkey: lock 'jobs/lost' of owner ")
        .contains("was lost")
        .contains("sending SIGTERM to the command (pid ")
        .hasLineCount(1);
  }

  @Test
  void sendsTheChosenSignalAndKillsTheTreeIfTheCommandIgnoresIt() throws Exception {
    Path marker = directory.resolve("marker");
    Path child = directory.resolve("child");
    exec =
        startExec(
            "jobs/stubborn",
            "--watchdog-lease",
            "3s",
            // USR1, not HUP: a build run under nohup ignores HUP, every child inherits that, and a
            // shell cannot trap a signal that was ignored when it started (POSIX).
            "--signal",
            "USR1",
            // Long enough for the shell to run its trap on a loaded machine before the kill.
            "--kill-after",
            "3s",
            "--",
            "sh",
            "-c",
            "trap 'echo USR1 >> "
                + marker
                + "' USR1; sleep 60 & echo $! > "
                + child
                + "; while true; do sleep 0.1; done");
    awaitHeld("jobs/stubborn");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> Files.exists(child) && Files.size(child) > 0);
    long grandchild = Long.parseLong(Files.readString(child).strip());

    client().admin().forceRelease("jobs/stubborn");

    assertThat(awaitExit(exec)).isEqualTo(ExitCodes.LEASE_LOST);
    assertThat(Files.readString(marker, UTF_8)).startsWith("USR1\n");
    assertThat(ProcessHandle.of(grandchild).filter(ProcessHandle::isAlive)).isEmpty();
  }

  @Test
  void theCommandTreeDiesWithinASecondOfExecBeingKilled() throws Exception {
    Path pids = directory.resolve("pids");
    Process running =
        startExec(
            "jobs/orphan",
            "--",
            "sh",
            "-c",
            "sleep 300 & echo $! > "
                + pids
                + ".tmp; echo $$ >> "
                + pids
                + ".tmp; mv "
                + pids
                + ".tmp "
                + pids
                + "; wait");
    exec = running;
    awaitHeld("jobs/orphan");
    await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(pids));
    List<ProcessHandle> tree =
        Files.readAllLines(pids).stream()
            .map(pid -> ProcessHandle.of(Long.parseLong(pid.strip())).orElseThrow())
            .toList();
    assertThat(tree).hasSize(2).allMatch(ProcessHandle::isAlive);

    running.destroyForcibly(); // SIGKILL: no shutdown hook, no release
    running.waitFor();

    await()
        .atMost(Duration.ofSeconds(1))
        .untilAsserted(() -> assertThat(tree).noneMatch(ExecIT::runs));
    assertThat(client().admin().inspect("jobs/orphan"))
        .as("nobody released it: the lease runs out by itself")
        .isPresent();
  }

  @Test
  void signalsTheCommandWhenItOutlivesAnExplicitLease() throws Exception {
    Cli.Result result =
        Cli.run("exec", "jobs/short", "--lease", "1s", "--backend", uri, "--", "sleep", "60");

    assertThat(result.exitCode()).as(result.describe()).isEqualTo(ExitCodes.LEASE_LOST);
    assertThat(result.stderr())
        .contains("lock 'jobs/short'")
        .contains("its lease time ran out")
        .contains("SIGTERM")
        .hasLineCount(1);
    assertThat(result.took()).isLessThan(Duration.ofSeconds(30));
  }

  @Test
  void tellsAMissingCommandFromOneThatCannotRun() throws IOException {
    Cli.Result missing =
        Cli.run("exec", "jobs/x", "--backend", uri, "--", "no-such-command-latchkey");
    assertThat(missing.exitCode()).as(missing.describe()).isEqualTo(ExitCodes.COMMAND_NOT_FOUND);
    assertThat(missing.stderr())
        .isEqualTo("latchkey: cannot run 'no-such-command-latchkey': No such file or directory\n");

    Path script = Files.writeString(directory.resolve("not-executable"), "echo hi\n");
    Cli.Result notExecutable = Cli.run("exec", "jobs/x", "--backend", uri, "--", script.toString());
    assertThat(notExecutable.exitCode())
        .as(notExecutable.describe())
        .isEqualTo(ExitCodes.CANNOT_EXECUTE);
    assertThat(client().admin().inspect("jobs/x")).isEmpty();
  }

  @Test
  void passesOnTheSignalOfACommandThatDiedOfOne() {
    Cli.Result result =
        Cli.run("exec", "jobs/killed", "--backend", uri, "--", "sh", "-c", "kill -9 $$");
    assertThat(result.exitCode()).as(result.describe()).isEqualTo(128 + 9);
  }

  /**
   * Whether a process still runs. A zombie does not: it has died, and only waits for its new parent
   * (init, in a container whatever runs as pid 1, which may reap late) to reap it, which
   * ProcessHandle.isAlive() does not tell apart.
   */
  private static boolean runs(ProcessHandle process) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
      return !stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
    } catch (IOException gone) {
      return false;
    }
  }

  private Process startExec(String name, String... rest) {
    String[] args = new String[rest.length + 4];
    args[0] = "exec";
    args[1] = name;
    args[2] = "--backend";
    args[3] = uri;
    System.arraycopy(rest, 0, args, 4, rest.length);
    return Cli.start(Map.of(), directory.resolve("stdout"), directory.resolve("stderr"), args);
  }

  private Optional<LockInfo> awaitHeld(String name) {
    await().atMost(Duration.ofSeconds(30)).until(() -> client().admin().inspect(name).isPresent());
    return client().admin().inspect(name);
  }

  private static int awaitExit(Process process) throws InterruptedException {
    if (!process.waitFor(EXEC_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("latchkey exec did not exit in time");
    }
    return process.exitValue();
  }
}
