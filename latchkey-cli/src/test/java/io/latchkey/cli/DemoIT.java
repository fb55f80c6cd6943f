package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Latchkey;
import io.latchkey.servers.RedisTestServer;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code latchkey demo} as a process: worker JVMs, an embedded or a given Redis, the table. */
class DemoIT {
  private static final int STOCK = 60;

  @Test
  void sellsTheStockExactlyUnderEveryGuardAndOversellsWithout() {
    Cli.Result demo = Cli.run("demo", "--stock", "60", "--processes", "2", "--threads", "3");

    assertThat(demo.exitCode()).as(demo.describe()).isZero();
    assertThat(demo.stdout())
        .startsWith(
            "Flash sale: 60 items, 2 processes x 3 buyer threads\nBackend: redis://127.0.0.1:")
        .contains("(an embedded redis-server ")
        .contains(", stopped after the demo)");
    assertThat(demo.stderr()).as("no progress bar off a terminal, no logs").isEmpty();
    Map<String, long[]> rows = rows(demo.stdout());
    assertThat(rows)
        .containsOnlyKeys("no lock", "reentrant lock", "fair lock", "semaphore checkout");
    assertThat(Objects.requireNonNull(rows.get("no lock"))[0])
        .as("sold without a lock")
        .isGreaterThan(STOCK);
    assertThat(Objects.requireNonNull(rows.get("no lock"))[1])
        .as("oversold without a lock")
        .isEqualTo(Objects.requireNonNull(rows.get("no lock"))[0] - STOCK);
    for (String guarded : List.of("reentrant lock", "fair lock", "semaphore checkout")) {
      assertThat(rows.get(guarded)).as(guarded).startsWith(STOCK, 0);
    }
    String embedded = demo.stdout().split("Backend: ", 2)[1].split(" ", 2)[0];
    assertThat(workersLeft(embedded)).isEmpty();
  }

  @Test
  void runsOnTheBackendOfTheEnvironment() {
    try (RedisTestServer redis = RedisTestServer.start()) {
      Cli.Result demo =
          Cli.run(
              Map.of(BackendOption.ENVIRONMENT_VARIABLE, redis.uri()),
              "demo",
              "-k",
              "40",
              "-p",
              "2",
              "-t",
              "2");

      assertThat(demo.exitCode()).as(demo.describe()).isZero();
      assertThat(demo.stdout())
          .startsWith(
              "Flash sale: 40 items, 2 processes x 2 buyer threads\nBackend: "
                  + redis.uri()
                  + "\n");
      Map<String, long[]> rows = rows(demo.stdout());
      assertThat(rows.get("fair lock")).startsWith(40, 0);
      assertThat(workersLeft(redis.uri())).isEmpty();
      try (Latchkey latchkey = Latchkey.connect(redis.uri())) {
        assertThat(latchkey.semaphore(SaleGuard.SEMAPHORE.resource()).isExists())
            .as("the demo deleted the semaphore it made")
            .isFalse();
        assertThat(latchkey.admin().list()).isEmpty();
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mariadb", "zookeeper"})
  void startsTheServerItIsNamedForWorkerProcesses(String server) {
    Cli.Result demo = Cli.run("demo", "--backend", server, "-k", "30", "-p", "2", "-t", "2");

    assertThat(demo.exitCode()).as(demo.describe()).isZero();
    String scheme = server.equals("zookeeper") ? "zookeeper://127.0.0.1:" : "jdbc:" + server;
    assertThat(demo.stdout())
        .startsWith("Flash sale: 30 items, 2 processes x 2 buyer threads\nBackend: " + scheme)
        .contains(" (an embedded ")
        .contains(", stopped after the demo)\n");
    assertThat(demo.stderr()).as("no logs").isEmpty();
    Map<String, long[]> rows = rows(demo.stdout());
    assertThat(rows)
        .containsOnlyKeys("no lock", "reentrant lock", "fair lock", "semaphore checkout");
    for (String guarded : List.of("reentrant lock", "fair lock", "semaphore checkout")) {
      assertThat(rows.get(guarded)).as(guarded).startsWith(30, 0);
    }
    String backend = demo.stdout().split("Backend: ", 2)[1].split(" ", 2)[0];
    assertThat(workersLeft(backend)).isEmpty();
  }

  @Test
  void usesThreadsOfOneProcessOnTheInProcessBackend() {
    Cli.Result demo = Cli.run("demo", "--backend", "memory:", "-k", "50", "-p", "2", "-t", "2");

    assertThat(demo.exitCode()).as(demo.describe()).isZero();
    assertThat(demo.stdout())
        .startsWith("Flash sale: 50 items, 4 buyer threads in this process\nBackend: memory")
        .contains(" (in-process: no other process can reach it)\n");
    assertThat(rows(demo.stdout()).get("reentrant lock")).startsWith(50, 0);
  }

  @Test
  void refusesOptionsOutOfRange() {
    Cli.Result demo = Cli.run("demo", "--stock", "0");

    assertThat(demo.exitCode()).as(demo.describe()).isEqualTo(ExitCodes.USAGE);
    assertThat(demo.stderr())
        .isEqualTo(
            "latchkey: --stock must be between 1 and 1000000, was 0 (see 'latchkey demo --help')\n");
  }

  /** The table's rows by run: sold, oversold. */
  private static Map<String, long[]> rows(String stdout) {
    return stdout
        .lines()
        .filter(line -> line.matches("[a-z ]+ {2,}\\d+ +\\d+ .*"))
        .collect(
            Collectors.toMap(
                line -> line.split(" {2,}", -1)[0],
                line -> {
                  String[] cells = line.split(" {2,}", -1);
                  return new long[] {Long.parseLong(cells[1]), Long.parseLong(cells[2])};
                }));
  }

  /** Worker processes still running whose command line contains {@code text}. */
  private static List<String> workersLeft(String text) {
    return ProcessHandle.allProcesses()
        .filter(ProcessHandle::isAlive)
        .map(p -> p.info().commandLine().orElse(""))
        .filter(line -> line.contains("demo-worker") && line.contains(text))
        .collect(Collectors.toList());
  }
}
