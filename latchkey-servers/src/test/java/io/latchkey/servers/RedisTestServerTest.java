package io.latchkey.servers;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class RedisTestServerTest {

  @Test
  void startsItsOwnServerOnAFreeLoopbackPort() {
    try (RedisTestServer server = RedisTestServer.start()) {
      assertThat(server.isRunning()).isTrue();
      assertThat(server.port()).isNotEqualTo(6379);
      assertThat(server.uri()).isEqualTo("redis://127.0.0.1:" + server.port());
      assertThat(server.hostAndPort()).isEqualTo("127.0.0.1:" + server.port());
      assertThat(server.command("PING")).isEqualTo("PONG");
      assertThat(server.info("server"))
          .containsEntry("process_id", Long.toString(server.pid().orElseThrow()));
      assertThat(server.command("CONFIG", "GET", "save")).isEqualTo(List.of("save", ""));
      assertThat(server.command("CONFIG", "GET", "appendonly"))
          .isEqualTo(List.of("appendonly", "no"));
    }
  }

  @Test
  void twoServersGetTwoPorts() {
    try (RedisTestServer first = RedisTestServer.start();
        RedisTestServer second = RedisTestServer.start()) {
      assertThat(first.port()).isNotEqualTo(second.port());
      first.command("SET", "only-in", "first");
      assertThat(second.command("GET", "only-in")).isNull();
    }
  }

  @Test
  void repliesAreParsedIntoJavaObjects() {
    try (RedisTestServer server = RedisTestServer.start()) {
      assertThat(server.command("SET", "key", "välue")).isEqualTo("OK");
      assertThat(server.command("GET", "key")).isEqualTo("välue");
      assertThat(server.command("GET", "missing")).isNull();
      assertThat(server.command("INCR", "counter")).isEqualTo(1L);
      server.command("RPUSH", "list", "a", "b");
      assertThat(server.command("LRANGE", "list", "0", "-1")).isEqualTo(List.of("a", "b"));
      assertThat(server.command("EVAL", "return {1, 'two', false}", "0"))
          .isEqualTo(Arrays.asList(1L, "two", null));
      assertThat(server.info("commandstats")).containsKey("cmdstat_set");

      assertThatThrownBy(() -> server.command("INCR", "list"))
          .isInstanceOfSatisfying(
              RedisErrorReplyException.class,
              e -> assertThat(e.errorCode()).isEqualTo("WRONGTYPE"));
      assertThatThrownBy(() -> server.command("NO-SUCH-COMMAND"))
          .isInstanceOfSatisfying(
              RedisErrorReplyException.class, e -> assertThat(e.errorCode()).isEqualTo("ERR"));
    }
  }

  @Test
  void killCrashesTheServerAndRestartBringsItBackEmptyOnTheSamePort() {
    try (RedisTestServer server = RedisTestServer.start()) {
      int port = server.port();
      long pid = server.pid().orElseThrow();
      server.command("SET", "key", "value");

      server.kill();

      assertThat(server.isRunning()).isFalse();
      assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isEmpty();
      assertThatThrownBy(() -> server.command("PING")).isInstanceOf(IllegalStateException.class);

      server.restart();

      assertThat(server.port()).isEqualTo(port);
      assertThat(server.pid().orElseThrow()).isNotEqualTo(pid);
      assertThat(server.command("GET", "key")).isNull();
    }
  }

  @Test
  void stopAndRestart() {
    try (RedisTestServer server = RedisTestServer.start()) {
      server.stop();
      assertThat(server.isRunning()).isFalse();
      server.stop();

      server.restart();
      assertThat(server.command("PING")).isEqualTo("PONG");
      server.restart();
      assertThat(server.command("PING")).isEqualTo("PONG");
    }
  }

  @Test
  void aPasswordProtectsTheDefaultUser() throws IOException {
    try (RedisTestServer server =
        RedisTestServer.builder()
            .password("s3cret \"quoted\"")
            .aclUser("alice", "wonder")
            .start()) {
      assertThat(rawCommand(server.port(), "PING")).startsWith("-NOAUTH");
      assertThat(server.password()).contains("s3cret \"quoted\"");
      assertThat(server.command("ACL", "WHOAMI")).isEqualTo("default");
      assertThat(server.command("AUTH", "alice", "wonder")).isEqualTo("OK");
      assertThatThrownBy(() -> server.command("AUTH", "alice", "wrong"))
          .isInstanceOf(RedisErrorReplyException.class);
    }
  }

  @Test
  void extraConfigurationIsApplied() {
    try (RedisTestServer server =
        RedisTestServer.builder().config("maxmemory-policy", "allkeys-lru").start()) {
      assertThat(server.command("CONFIG", "GET", "maxmemory-policy"))
          .isEqualTo(List.of("maxmemory-policy", "allkeys-lru"));
    }
    assertThatThrownBy(() -> RedisTestServer.builder().config("port", "6379"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aBadConfigurationFailsWithTheServersOwnMessage() {
    assertThatThrownBy(() -> RedisTestServer.builder().config("no-such-directive", "x").start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no-such-directive");
  }

  @Test
  void closeStopsTheProcessAndDeletesItsDirectory() {
    RedisTestServer server = RedisTestServer.start();
    long pid = server.pid().orElseThrow();
    Path directory = server.logFile().getParent();
    assertThat(directory).isDirectory();

    server.close();
    server.close();

    assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isEmpty();
    assertThat(Files.exists(directory)).isFalse();
    assertThatThrownBy(server::restart).isInstanceOf(IllegalStateException.class);
  }

  /** Sends one inline command without authenticating, returning the first reply line. */
  private static String rawCommand(int port, String command) throws IOException {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
      socket.setSoTimeout(5_000);
      OutputStream out = socket.getOutputStream();
      out.write((command + "\r\n").getBytes(UTF_8));
      out.flush();
      InputStream in = socket.getInputStream();
      StringBuilder line = new StringBuilder();
      for (int b = in.read(); b != -1 && b != '\r'; b = in.read()) {
        line.append((char) b);
      }
      return line.toString();
    }
  }
}
