package io.latchkey.cli;

import io.latchkey.BackendUnavailableException;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.Lease;
import io.latchkey.LeaseLostException;
import io.latchkey.LockTimeoutException;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code latchkey exec NAME -- CMD ARGS...}: runs a command while holding a lock, like {@code
 * flock} or {@code consul lock}, and passes on its exit code.
 *
 * <p>The lock is kept by the watchdog, or held for an explicit {@code --lease}. If the lease is
 * lost while the command runs (renewal refused after a force-release or an eviction, renewal
 * failing until the lease ran out, or the explicit lease running out), the command and its
 * descendants get {@code --signal}, then SIGKILL after {@code --kill-after}, and exec exits with
 * {@link ExitCodes#LEASE_LOST}: the command is not left working on a lock it no longer has. If exec
 * itself is told to stop (SIGTERM, SIGINT), it does the same to the command and releases the lock.
 * If exec is killed outright (SIGKILL), an {@link ExecDeathWatch} started beside the command stops
 * the command's tree within about a second.
 */
@Command(
    name = "exec",
    mixinStandardHelpOptions = true,
    header = "Runs a command while holding a lock; signals it if the lease is lost.",
    description =
        "Runs CMD while holding the lock NAME; releases it when CMD exits and exits with "
            + "CMD's code. CMD's environment has LATCHKEY_LOCK (the name) and "
            + "LATCHKEY_FENCING_TOKEN (the grant's fencing token). The watchdog keeps the lease "
            + "alive while CMD runs, unless --lease is given. If the lease is lost, CMD (and "
            + "its children) get --signal.",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0-255:CMD's exit code (128+N if CMD died of signal N)",
      "75:the lock was not had within --wait; CMD did not run",
      "76:the lease was lost while CMD ran; CMD was signalled",
      "125:latchkey failed (bad usage, backend unreachable); CMD did not run",
      "126:CMD could not be started",
      "127:CMD was not found"
    })
final class ExecCommand implements Callable<Integer> {
  static final String LOCK_VARIABLE = "LATCHKEY_LOCK";
  static final String FENCING_TOKEN_VARIABLE = "LATCHKEY_FENCING_TOKEN";

  @Spec CommandSpec spec;

  @Mixin BackendOption backend;

  @Parameters(index = "0", paramLabel = "NAME", description = "The lock name.")
  String name;

  @Parameters(
      index = "1..*",
      arity = "1..*",
      paramLabel = "CMD",
      description = "The command and its arguments, after '--'.")
  List<String> command;

  @Option(
      names = "--wait",
      paramLabel = "D",
      defaultValue = "0s",
      converter = Durations.class,
      description =
          "How long to wait for the lock, e.g. 30s, 2m (default: ${DEFAULT-VALUE}, try once).")
  Duration wait;

  @Option(
      names = "--lease",
      paramLabel = "D",
      converter = Durations.class,
      description =
          "Hold the lock for at most D, without renewal; CMD is signalled if it runs longer.")
  @Nullable Duration lease;

  @Option(
      names = "--watchdog-lease",
      paramLabel = "D",
      converter = Durations.class,
      description =
          "The lease the watchdog keeps alive, renewed every third of it; a lost lease is noticed"
              + " within a third (default: 30s).")
  @Nullable Duration watchdogLease;

  @Option(
      names = "--signal",
      paramLabel = "SIG",
      defaultValue = "TERM",
      converter = Signal.Converter.class,
      description =
          "The signal for CMD when the lease is lost: HUP, INT, QUIT, KILL, USR1, USR2,"
              + " TERM (default: ${DEFAULT-VALUE}).")
  Signal signal;

  @Option(
      names = "--kill-after",
      paramLabel = "D",
      defaultValue = "10s",
      converter = Durations.class,
      description =
          "SIGKILL CMD if it still runs this long after --signal (default: ${DEFAULT-VALUE}).")
  Duration killAfter;

  @Override
  public Integer call() throws InterruptedException {
    String uri = backend.shared();
    if (lease != null && watchdogLease != null) {
      throw new ParameterException(
          spec.commandLine(),
          "--lease (no renewal) and --watchdog-lease (renewal) exclude each other");
    }
    if (lease != null && lease.isZero()) {
      throw new ParameterException(spec.commandLine(), "--lease must be longer than 0");
    }
    LatchkeyOptions.Builder options = BackendOption.options().closeOnShutdown(false);
    if (watchdogLease != null) {
      options.leaseTime(watchdogLease);
    }
    PrintWriter err = spec.commandLine().getErr();
    try (Latchkey latchkey = Latchkey.connect(uri, options.build())) {
      Lease held;
      try {
        held =
            lease == null
                ? latchkey.lock(name).acquire(wait)
                : latchkey.lock(name).acquire(wait, lease);
      } catch (LockTimeoutException e) {
        err.println("latchkey: " + busy(latchkey));
        err.flush();
        return ExitCodes.LOCK_TIMEOUT;
      }
      return new Supervisor(latchkey, held, err).run();
    }
  }

  /** Says that the lock was not had, and who holds it if the backend can still tell. */
  private String busy(Latchkey latchkey) {
    String holder;
    try {
      LockView view = LockView.of(latchkey, name);
      holder =
          view.locks().stream()
              .flatMap(lock -> lock.holders().stream())
              .findFirst()
              .map(view::describe)
              .orElse("");
    } catch (RuntimeException e) {
      holder = "";
    }
    if (wait.isZero()) {
      return "lock '"
          + name
          + "' is held"
          + (holder.isEmpty() ? "" : " by " + holder)
          + "; exec tried once (--wait D waits)";
    }
    return "lock '"
        + name
        + "' was not free within "
        + Durations.format(wait)
        + (holder.isEmpty() ? "" : "; it is held by " + holder);
  }

  /** Runs the command under one lease and watches both. */
  private final class Supervisor {
    private final Latchkey latchkey;
    private final Lease held;
    private final PrintWriter err;
    private final CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    private final AtomicBoolean stopping = new AtomicBoolean();

    Supervisor(Latchkey latchkey, Lease held, PrintWriter err) {
      this.latchkey = latchkey;
      this.held = held;
      this.err = err;
    }

    int run() throws InterruptedException {
      ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
      builder.environment().put(LOCK_VARIABLE, name);
      builder.environment().put(FENCING_TOKEN_VARIABLE, Long.toString(held.fencingToken()));
      Process process;
      ExecDeathWatch deathWatch = ExecDeathWatch.start(signal);
      try {
        process = builder.start();
      } catch (IOException e) {
        deathWatch.close();
        releaseQuietly();
        return cannotStart(e);
      }
      deathWatch.watch(process.toHandle());
      ProcessTree tree = new ProcessTree(process.toHandle());
      Thread hook =
          new Thread(() -> stopFromOutside(process, tree, deathWatch), "latchkey-exec-shutdown");
      Runtime.getRuntime().addShutdownHook(hook);
      held.onLost(lost::complete);
      try {
        // As long as CMD runs: that is what exec is for.
        CompletableFuture.anyOf(process.onExit(), lost).join();
        if (stopping.get()) {
          return ExitCodes.FAILURE;
        }
        if (lost.isDone() && process.isAlive()) {
          LeaseLostException reason = lost.join();
          err.printf(
              "latchkey: %s; sending SIG%s to the command (pid %d)%n",
              OneLineErrors.describe(reason), signal.name(), process.pid());
          err.flush();
          tree.terminate(signal, killAfter);
          return ExitCodes.LEASE_LOST;
        }
        return release(process.exitValue());
      } finally {
        deathWatch.close();
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
          // The hook is running or has run; it releases the lock.
        }
      }
    }

    private int release(int exitCode) {
      try {
        held.release();
        return exitCode;
      } catch (LeaseLostException e) {
        err.println(
            "latchkey: the lock '"
                + name
                + "' was lost before the command finished (it exited with "
                + exitCode
                + "): "
                + OneLineErrors.describe(e));
        err.flush();
        return ExitCodes.LEASE_LOST;
      } catch (BackendUnavailableException e) {
        err.println(
            "latchkey: could not release '"
                + name
                + "'; it frees when its lease runs out: "
                + OneLineErrors.describe(e));
        err.flush();
        return exitCode;
      }
    }

    private void releaseQuietly() {
      try {
        held.release();
      } catch (RuntimeException e) {
        // The lock frees when its lease runs out; the caller reports the failure that matters.
      }
    }

    /**
     * The errno and reason of a failed exec, as the JDK words it: "error=2, No such file or
     * directory" (JDK 17) or "Exec failed, error: 2 (No such file or directory)" (JDK 25).
     */
    private static final Pattern EXEC_FAILURE =
        Pattern.compile("error=(\\d+), (.*)|error: (\\d+) \\((.*)\\)");

    private int cannotStart(IOException e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      String detail = String.valueOf(cause.getMessage());
      Matcher failure = EXEC_FAILURE.matcher(detail);
      boolean parsed = failure.find();
      String errno = parsed ? firstNonNull(failure.group(1), failure.group(3)) : "";
      String reason = parsed ? firstNonNull(failure.group(2), failure.group(4)) : detail;
      err.println("latchkey: cannot run '" + command.get(0) + "': " + reason);
      err.flush();
      return errno.equals("2") ? ExitCodes.COMMAND_NOT_FOUND : ExitCodes.CANNOT_EXECUTE;
    }

    private static String firstNonNull(@Nullable String first, @Nullable String second) {
      return first != null ? first : String.valueOf(second);
    }

    /** Shutdown hook: exec was told to stop; stop the command, then free the lock. */
    private void stopFromOutside(Process process, ProcessTree tree, ExecDeathWatch deathWatch) {
      stopping.set(true);
      try {
        if (process.isAlive()) {
          tree.terminate(signal, killAfter);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        deathWatch.close();
        latchkey.close();
      }
    }
  }
}
