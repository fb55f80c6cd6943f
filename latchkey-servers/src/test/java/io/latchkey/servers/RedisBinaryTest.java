package io.latchkey.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RedisBinaryTest {

  @Test
  void locateFindsAWorkingRedisServer() {
    RedisBinary binary = RedisBinary.locate();

    assertThat(binary.path()).isAbsolute().isExecutable();
    assertThat(binary.version()).matches("\\d+\\.\\d+\\.\\d+");
    assertThat(binary.isAtLeast(6, 0)).isTrue();
    assertThat(RedisBinary.locate()).isSameAs(binary);
  }

  @Test
  void theMavenArtifactShipsAServerThatRunsHere() {
    assumeTrue(
        System.getProperty("os.name").toLowerCase(Locale.ROOT).contains("linux")
            && System.getProperty("os.arch").matches("amd64|x86_64"),
        "the fallback is checked on linux-x86_64, the platform of our CI");

    Optional<RedisBinary> fromArtifact = RedisBinary.fromMavenArtifact();

    assertThat(fromArtifact).isPresent();
    RedisBinary binary = fromArtifact.orElseThrow();
    assertThat(binary.source()).isEqualTo(RedisBinary.Source.MAVEN_ARTIFACT);
    assertThat(binary.path()).isExecutable();
    assertThat(binary.version()).startsWith("6.2.");
    try (RedisTestServer server = RedisTestServer.builder().binary(binary).start()) {
      assertThat(server.command("PING")).isEqualTo("PONG");
      assertThat(server.info("server")).containsEntry("redis_version", binary.version());
    }
  }

  @Test
  void anExplicitPathMustBeAWorkingRedisServer(@TempDir Path directory) throws IOException {
    Path notExecutable = Files.writeString(directory.resolve("redis-server"), "not a binary");

    assertThatThrownBy(() -> RedisBinary.of(notExecutable))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("not an executable file");
    assertThatThrownBy(() -> RedisBinary.of(directory.resolve("missing")))
        .isInstanceOf(IllegalStateException.class);
  }
}
