package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.ClientInfo;
import io.latchkey.Latchkey;
import io.latchkey.Lease;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The monitor commands and {@code exec} as processes against a backend other than Redis, on a
 * server the test class starts ({@link ServerForTests}): what every shared backend must show and
 * do, what it must refuse in one line where it lacks a feature, and that a password in the URI is
 * never printed. Each backend's class supplies the server and its own cases.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SharedBackendCommands {
  static final String PASSWORD = "s3cret-pw";
  private static final Duration LONG_LEASE = Duration.ofMinutes(10);

  private @Nullable ServerForTests server;
  String uri = "";
  private @Nullable Latchkey client;

  /** Starts the server of the backend. */
  abstract ServerForTests startServer();

  @BeforeAll
  void start() {
    server = startServer();
  }

  @AfterAll
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  @BeforeEach
  void freshNamespace() {
    uri = server().freshUri();
    client = server().client(uri);
  }

  ServerForTests server() {
    return Objects.requireNonNull(server, "the server was not started");
  }

  Latchkey client() {
    return Objects.requireNonNull(client, "no client");
  }

  /**
   * @return whether the backend shows semaphores and latches ({@code SYNCHRONIZER_INSPECTION}),
   *     stated by each backend's class rather than read from the client under test
   */
  boolean inspectsSynchronizers() {
    return false;
  }

  @Test
  void lsInspectAndUnlockShowAndFreeAHeldLock() throws Exception {
    Lease outer = client().lock("orders/42").acquire(Duration.ofSeconds(5));
    Lease inner = client().lock("orders/42").acquire(Duration.ofSeconds(5));
    String thread = Long.toString(Thread.currentThread().getId());
    String pid = Long.toString(ProcessHandle.current().pid());

    Cli.Result ls = Cli.run("ls", "--backend", uri);

    assertThat(ls.exitCode()).as(ls.describe()).isZero();
    List<String> lines = ls.stdout().lines().toList();
    assertThat(lines.get(1).split(" +"))
        .startsWith("orders/42", "exclusive", "2")
        .contains(
            Long.toString(outer.fencingToken()), client().clientId().substring(0, 8), pid, thread)
        .endsWith("yes");
    String cannotInspect = SynchronizerView.cannotInspect(client());
    if (inspectsSynchronizers()) {
      assertThat(lines).as("nothing but the lock exists").hasSize(2);
    } else {
      assertThat(lines).as("synchronizers are not claimed absent").endsWith("", cannotInspect);
    }
    assertThat(ls.stderr()).isEmpty();

    Cli.Result json = Cli.run("ls", "--json", "--backend", uri);
    assertThat(json.exitCode()).as(json.describe()).isZero();
    Map<String, @Nullable Object> document = JsonParser.object(json.stdout());
    assertThat(document.get("backend")).isEqualTo(client().backendDescription());
    @Nullable Object noneOrUnknown = inspectsSynchronizers() ? List.of() : null;
    assertThat(document)
        .containsEntry("semaphores", noneOrUnknown)
        .containsEntry("latches", noneOrUnknown);
    List<?> locks = (List<?>) Objects.requireNonNull(document.get("locks"));
    assertThat(locks).hasSize(1);
    Map<?, ?> holder =
        (Map<?, ?>)
            ((List<?>) Objects.requireNonNull(((Map<?, ?>) locks.get(0)).get("holders"))).get(0);
    assertThat(holder.get("clientId")).isEqualTo(client().clientId());
    assertThat(holder.get("clientAlive")).isEqualTo(true);
    assertThat(holder.get("holds")).isEqualTo(2L);
    assertThat(holder.get("fencingToken")).isEqualTo(outer.fencingToken());

    Cli.Result inspect = Cli.run("inspect", "orders/42", "--backend", uri);
    assertThat(inspect.exitCode()).as(inspect.describe()).isZero();
    assertThat(inspect.stdout())
        .startsWith("lock             orders/42\n")
        .contains("\n  fencing token  " + outer.fencingToken() + "\n")
        .contains("\n  alive          yes\n");
    if (inspectsSynchronizers()) {
      assertThat(inspect.stdout())
          .endsWith("No semaphore, leased semaphore or latch is named 'orders/42'.\n");
    } else {
      assertThat(inspect.stdout()).endsWith(cannotInspect + "\n");
    }
    Cli.Result inspectJson = Cli.run("inspect", "--json", "orders/42", "--backend", uri);
    assertThat(JsonParser.object(inspectJson.stdout()))
        .containsEntry("held", true)
        .containsEntry("semaphore", null)
        .containsEntry("synchronizersInspected", inspectsSynchronizers());

    Cli.Result unlock = Cli.run("unlock", "--force", "orders/42", "--backend", uri);

    assertThat(unlock.exitCode()).as(unlock.describe()).isZero();
    assertThat(unlock.stdout())
        .startsWith("Released 'orders/42', held by thread " + thread)
        .contains("pid " + pid);
    assertThat(client().admin().inspect("orders/42")).isEmpty();
    Cli.Result free = Cli.run("inspect", "orders/42", "--backend", uri);
    assertThat(free.stdout()).startsWith("Lock 'orders/42' is not held.\n");
    assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
  }

  @Test
  void execRunsTheCommandUnderTheLockAndWaitsItsTurn() throws Exception {
    ExecIT.assertRunsTheCommandWithTheLock(uri, client());

    Lease lease = client().lock("jobs/busy").acquire(Duration.ofSeconds(5));
    Cli.Result busy = Cli.run("exec", "jobs/busy", "--backend", uri, "--", "echo", "never ran");
    assertThat(busy.exitCode()).as(busy.describe()).isEqualTo(ExitCodes.LOCK_TIMEOUT);
    assertThat(busy.stdout()).isEmpty();
    assertThat(busy.stderr())
        .startsWith("latchkey: lock 'jobs/busy' is held by thread")
        .hasLineCount(1);
    lease.release();
  }

  @Test
  void reapLeavesTheHoldersOfLiveClientsAlone() throws Exception {
    Lease lease = client().lock("reap/live").acquire(Duration.ofSeconds(5));

    Cli.Result reap = Cli.run("reap", "--min-lease", "1s", "--backend", uri);

    assertThat(reap.exitCode()).as(reap.describe()).isZero();
    assertThat(reap.stdout())
        .isEqualTo(
            "Evicted 0 holders of dead clients; left alone: 1 of live clients, 0 with less than"
                + " 1s of lease left.\n");
    assertThat(client().admin().inspect("reap/live")).isPresent();
    lease.release();
  }

  @Test
  void revocationIsRefusedInOneLine() {
    Cli.Result revoke = Cli.run("revoke", "exports", "--backend", uri);

    assertOneLineError(revoke, ExitCodes.FAILURE);
    assertThat(revoke.stderr())
        .isEqualTo(
            "latchkey: backend "
                + client().backendDescription()
                + " does not support REVOCATION\n");
  }

  @Test
  void aPasswordInTheUriIsNeverPrinted() throws Exception {
    String secretUri = server().withCredentials(uri, PASSWORD);
    Latchkey secretClient = server().client(secretUri);
    Lease lease = secretClient.lock("secret/lock").acquire(Duration.ofSeconds(5));

    List<Cli.Result> results =
        List.of(
            Cli.run("ls", "--backend", secretUri),
            Cli.run("ls", "--json", "--backend", secretUri),
            Cli.run(Map.of(BackendOption.ENVIRONMENT_VARIABLE, secretUri), "inspect", "x"),
            Cli.run("exec", "secret/lock", "--backend", secretUri, "--", "true"),
            Cli.run("revoke", "secret/lock", "--backend", secretUri),
            Cli.run("reap", "--dry-run", "--backend", secretUri),
            Cli.run("unlock", "--force", "secret/lock", "--backend", secretUri),
            Cli.run("ls", "--backend", server().unreachable(PASSWORD)),
            Cli.run("ls", "--backend", secretUri.replace("://", "://[")));

    assertThat(results.get(0).exitCode()).as(results.get(0).describe()).isZero();
    assertThat(results.get(0).stdout()).contains("secret/lock");
    assertOneLineError(results.get(7), ExitCodes.FAILURE);
    for (Cli.Result result : results) {
      assertThat(result.stdout() + result.stderr())
          .as(result.describe())
          .doesNotContain(PASSWORD)
          .doesNotContain("\tat ");
    }
    assertThat(secretClient.admin().inspect("secret/lock")).as("unlock --force freed it").isEmpty();
    assertThat(lease.fencingToken()).isPositive();
  }

  /**
   * Shared by the backends with explicit leases: a holder JVM killed with SIGKILL leaves a lock
   * with a long lease; once its presence record has expired, reap evicts it.
   */
  void reapEvictsTheLongLeaseOfAKilledHolder() throws Exception {
    LockHolder.Started dead = LockHolder.start(uri, "reap/dead", LONG_LEASE, Duration.ofSeconds(1));
    try {
      dead.process().destroyForcibly();
      assertThat(dead.process().waitFor(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  client().admin().clients().stream()
                      .map(ClientInfo::clientId)
                      .noneMatch(dead.clientId()::equals));

      Cli.Result reap = Cli.run("reap", "--min-lease", "1m", "--backend", uri);

      assertThat(reap.exitCode()).as(reap.describe()).isZero();
      assertThat(reap.stdout())
          .contains("reap/dead")
          .contains(dead.clientId().substring(0, 8))
          .contains("evicted")
          .endsWith(
              "Evicted 1 holder of dead clients; left alone: 0 of live clients, 0 with less than"
                  + " 1m0s of lease left.\n");
      assertThat(client().admin().inspect("reap/dead")).isEmpty();
    } finally {
      Cli.kill(dead.process());
    }
  }

  static void assertOneLineError(Cli.Result result, int exitCode) {
    assertThat(result.exitCode()).as(result.describe()).isEqualTo(exitCode);
    assertThat(result.stderr()).as(result.describe()).startsWith("latchkey: ").hasLineCount(1);
    assertThat(result.stderr()).doesNotContain("Exception", "\tat ");
    assertThat(result.stdout()).isEmpty();
  }
}
