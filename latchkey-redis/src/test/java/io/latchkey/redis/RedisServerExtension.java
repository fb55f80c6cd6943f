package io.latchkey.redis;

import io.latchkey.servers.RedisTestServer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A {@code redis-server} for one test class, started before its first test on a free port and
 * stopped after its last, and the clients a test opened, closed after each test (newest first).
 * Register it as a static field with {@code @RegisterExtension}.
 */
final class RedisServerExtension implements BeforeAllCallback, AfterAllCallback, AfterEachCallback {
  private final Supplier<RedisTestServer> starter;
  private @Nullable RedisTestServer server;
  private final List<AutoCloseable> opened = new ArrayList<>();

  /** A server with the defaults of {@link RedisTestServer#start()}. */
  RedisServerExtension() {
    this(RedisTestServer::start);
  }

  /**
   * @param starter starts the server, e.g. {@code () ->
   *     RedisTestServer.builder().password(…).start()}
   */
  RedisServerExtension(Supplier<RedisTestServer> starter) {
    this.starter = starter;
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    server = starter.get();
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
    opened.clear();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (server != null) {
      server.close();
      server = null;
    }
  }

  /**
   * @return the running server
   */
  RedisTestServer server() {
    if (server == null) {
      throw new IllegalStateException("redis-server has not been started");
    }
    return server;
  }

  /**
   * @param closeable closed after the current test
   * @return {@code closeable}
   */
  <T extends AutoCloseable> T closeAfterTest(T closeable) {
    opened.add(closeable);
    return closeable;
  }
}
