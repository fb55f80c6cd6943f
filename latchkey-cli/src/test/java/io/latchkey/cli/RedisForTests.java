package io.latchkey.cli;

import io.latchkey.Latchkey;
import io.latchkey.LatchkeyOptions;
import io.latchkey.servers.RedisTestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Redis a test class runs against, started by the test itself, and clients on it. Each test
 * uses a key prefix of its own, so tests do not see each other's locks.
 */
final class RedisForTests implements AutoCloseable {
  static final Duration CLIENT_LEASE = Duration.ofSeconds(6);
  private static final AtomicInteger PREFIXES = new AtomicInteger();

  private final RedisTestServer server = RedisTestServer.start();
  private final List<Latchkey> clients = new ArrayList<>();

  /**
   * @return a URI with a fresh key prefix
   */
  String freshUri() {
    return server.uri() + "?prefix=t" + PREFIXES.incrementAndGet() + ":";
  }

  /**
   * A client of the test JVM whose watchdog notices a lost lease within two seconds (a 6 s lease,
   * renewed every 2 s: short for the tests, long enough for a busy machine).
   */
  Latchkey client(String uri) {
    Latchkey client =
        Latchkey.connect(
            uri, LatchkeyOptions.builder().leaseTime(CLIENT_LEASE).closeOnShutdown(false).build());
    clients.add(client);
    return client;
  }

  @Override
  public void close() {
    clients.forEach(Latchkey::close);
    server.close();
  }
}
