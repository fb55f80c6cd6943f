package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.BackendTimeoutException;
import io.latchkey.BackendUnavailableException;
import io.latchkey.DistributedSemaphore;
import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.servers.RedisTestServer;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A command whose caller gave up while it waited for a new connection is never sent afterwards: on
 * a real server that is frozen (SIGSTOP) while the client reconnects.
 */
class RedisGivenUpCommandsTest {
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(1);

  @Test
  void aCommandGivenUpWhileItWaitedForAConnectionNeverRuns() throws Exception {
    try (RedisTestServer server = RedisTestServer.start();
        Latchkey client =
            Latchkey.connect(
                server.uri(),
                LatchkeyOptions.builder()
                    .operationTimeout(OPERATION_TIMEOUT)
                    .leaseTime(Duration.ofMinutes(1))
                    .closeOnShutdown(false)
                    .build())) {
      DistributedSemaphore semaphore = client.semaphore("given-up");
      semaphore.addPermits(1);

      // The client loses its connection and learns it: a call now fails at once.
      server.stop();
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInSameThread()
          .until(() -> failsUnavailable(semaphore));
      // The server comes back frozen: it accepts the client's new connection but does not answer.
      server.restart();
      long pid = server.pid().orElseThrow();
      signal("STOP", pid);
      try {
        assertThatThrownBy(() -> semaphore.addPermits(5))
            .isInstanceOf(BackendTimeoutException.class);
      } finally {
        // Thawed before the client's connection attempt gives up: the connection then comes.
        signal("CONT", pid);
      }

      // Once a later command has an answer, any command sent before it has run.
      int permits =
          await()
              .atMost(Duration.ofSeconds(10))
              .pollInSameThread()
              .ignoreExceptions()
              .until(semaphore::availablePermits, answered -> true);
      assertThat(permits).as("the restarted server's semaphore, untouched").isZero();
      assertThat(server.info("commandstats"))
          .as("the given-up addPermits script never ran")
          .doesNotContainKeys("cmdstat_evalsha", "cmdstat_eval");
      assertThat(server.command("EXISTS", new RedisKeys("latchkey:").semaphore("given-up")))
          .isEqualTo(0L);
    }
  }

  private static boolean failsUnavailable(DistributedSemaphore semaphore) {
    try {
      semaphore.availablePermits();
      return false;
    } catch (BackendUnavailableException e) {
      return !(e instanceof BackendTimeoutException);
    }
  }

  private static void signal(String signal, long pid) throws IOException, InterruptedException {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
    assertThat(kill.waitFor()).as("kill -%s %s", signal, pid).isZero();
  }
}
