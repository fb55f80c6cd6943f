package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.ClientInfo;
import io.latchkey.Latchkey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code latchkey reap}: a holder JVM killed with SIGKILL leaves a lock with a long lease; once its
 * presence record has expired, reap evicts it, and leaves alone the lock of a live holder and the
 * dead holder whose lease runs out soon anyway.
 */
class ReapIT {
  private static final Duration LONG_LEASE = Duration.ofMinutes(10);
  private static final Duration SHORT_LEASE = Duration.ofSeconds(40);
  private static final Duration HOLDER_CLIENT_LEASE = Duration.ofSeconds(1);

  private final List<Process> holders = new ArrayList<>();
  private @Nullable RedisForTests redis;

  @AfterEach
  void stopEverything() {
    holders.forEach(Cli::kill);
    if (redis != null) {
      redis.close();
    }
  }

  /** A started holder JVM and what it said. */
  private record Holder(Process process, String clientId) {}

  @Test
  void evictsTheLongLeaseOfAKilledHolderAndNothingElse() throws Exception {
    redis = new RedisForTests();
    String uri = redis.freshUri();
    Latchkey client = redis.client(uri);
    Holder dead = startHolder(uri, "reap/dead", LONG_LEASE);
    Holder live = startHolder(uri, "reap/live", LONG_LEASE);
    Holder expiring = startHolder(uri, "reap/expiring", SHORT_LEASE);

    dead.process().destroyForcibly();
    expiring.process().destroyForcibly();
    assertThat(dead.process().waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(expiring.process().waitFor(10, TimeUnit.SECONDS)).isTrue();
    await()
        .atMost(Duration.ofSeconds(15))
        .until(
            () ->
                client.admin().clients().stream()
                    .map(ClientInfo::clientId)
                    .noneMatch(id -> id.equals(dead.clientId()) || id.equals(expiring.clientId())));

    Cli.Result dryRun = Cli.run("reap", "--dry-run", "--min-lease", "1m", "--backend", uri);

    assertThat(dryRun.exitCode()).as(dryRun.describe()).isZero();
    assertThat(dryRun.stdout().lines().toList())
        .hasSize(3)
        .satisfies(
            lines -> {
              assertThat(lines.get(0).split(" +"))
                  .containsExactly("lock", "owner", "client", "mode", "lease", "left", "action");
              assertThat(lines.get(1))
                  .startsWith("reap/dead")
                  .contains(dead.clientId().substring(0, 8))
                  .endsWith("would evict");
              assertThat(lines.get(2))
                  .isEqualTo(
                      "Would evict 1 holder of dead clients; left alone: 1 of live clients, 1 with"
                          + " less than 1m0s of lease left.");
            });
    assertThat(client.admin().inspect("reap/dead")).isPresent();

    Cli.Result reap = Cli.run("reap", "--min-lease", "1m", "--backend", uri);

    assertThat(reap.exitCode()).as(reap.describe()).isZero();
    assertThat(reap.stdout())
        .contains("reap/dead")
        .contains("evicted")
        .contains("Evicted 1 holder of dead clients")
        .doesNotContain("reap/live")
        .doesNotContain("reap/expiring");
    assertThat(client.admin().inspect("reap/dead")).isEmpty();
    assertThat(client.admin().inspect("reap/live")).isPresent();
    assertThat(client.admin().inspect("reap/expiring")).isPresent();
    assertThat(live.process().isAlive()).isTrue();

    Cli.Result again = Cli.run("reap", "--min-lease", "1m", "--backend", uri);
    assertThat(again.stdout())
        .isEqualTo(
            "Evicted 0 holders of dead clients; left alone: 1 of live clients, 1 with less than"
                + " 1m0s of lease left.\n");
  }

  private Holder startHolder(String uri, String name, Duration lease) throws Exception {
    LockHolder.Started started = LockHolder.start(uri, name, lease, HOLDER_CLIENT_LEASE);
    holders.add(started.process());
    return new Holder(started.process(), started.clientId());
  }
}
