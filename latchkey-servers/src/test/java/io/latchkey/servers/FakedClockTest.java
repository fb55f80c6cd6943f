package io.latchkey.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FakedClockTest {

  @Test
  void movesTheWallClockOfAServerStartedThroughIt(@TempDir Path dir) throws Exception {
    FakedClock clock = FakedClock.in(dir);
    RedisBinary faked = RedisBinary.of(clock.wrap(FakedClock.redisServer().path()));
    try (RedisTestServer server = RedisTestServer.builder().binary(faked).start()) {
      long before = serverSeconds(server);
      assertThat(before).isCloseTo(System.currentTimeMillis() / 1000, offset(5L));
      server.command("SET", "lease", "held", "PX", "60000");

      clock.set(Duration.ofMinutes(2));

      assertThat(serverSeconds(server) - before).isBetween(115L, 130L);
      assertThat(server.command("GET", "lease"))
          .as("a key with 60 s left expires when the server's clock steps 2 min ahead")
          .isNull();
      clock.set(Duration.ZERO);
      assertThat(serverSeconds(server)).isCloseTo(System.currentTimeMillis() / 1000, offset(5L));
    }
  }

  private static long serverSeconds(RedisTestServer server) {
    List<?> time = (List<?>) java.util.Objects.requireNonNull(server.command("TIME"));
    return Long.parseLong(String.valueOf(time.get(0)));
  }
}
