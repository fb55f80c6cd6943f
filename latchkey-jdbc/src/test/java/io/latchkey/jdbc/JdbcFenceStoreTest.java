package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Latchkey;
import io.latchkey.Lease;
import io.latchkey.spi.BackendContext;
import io.latchkey.spi.FenceStore;
import io.latchkey.spi.LatchkeyBackend;
import io.latchkey.testkit.EpochRecordChecks;
import java.net.URI;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fence store of a quorum member ({@link TableFenceStore}) on real PostgreSQL, MariaDB and H2
 * servers: a raised lock counter makes the next grant's token larger and is never lowered, in table
 * mode and in a connection-bound mode; the epoch record is absent in new data, created with a
 * quarantine that the database's clock ends, raised but never lowered. Each test runs on tables of
 * a prefix of its own: new data.
 */
class JdbcFenceStoreTest {
  @RegisterExtension static final SqlServers SERVERS = new SqlServers();

  /** Ten thousand seconds of the clock floor (tokens are milliseconds times 1000) ahead. */
  private static final long AHEAD = 10_000_000_000L;

  @Test
  void postgresTableMode() throws Exception {
    assertFences(SERVERS.postgres().jdbcUrl() + "&latchkey.mode=table");
  }

  @Test
  void postgresRowMode() throws Exception {
    assertFences(SERVERS.postgres().jdbcUrl() + "&latchkey.mode=row");
  }

  @Test
  void mariaDbTableMode() throws Exception {
    assertFences(SERVERS.mariaDb().jdbcUrl() + "&latchkey.mode=table");
  }

  @Test
  void h2TableMode() throws Exception {
    assertFences(
        "jdbc:h2:mem:fences-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;latchkey.mode=table");
  }

  private static void assertFences(String base) throws Exception {
    String uri =
        base
            + "&latchkey.createSchema=true&latchkey.tablePrefix=f"
            + UUID.randomUUID().toString().replace("-", "").substring(0, 12)
            + "_";
    LatchkeyBackend backend = open(uri);
    try (backend;
        Latchkey client = Latchkey.connect(uri)) {
      FenceStore fences = backend.fences().orElseThrow();

      EpochRecordChecks.createdRaisedNeverLowered(fences);

      // A lock's counter: read without creating anything, raised above the next token's floor.
      assertThat(raise(fences, "never", 0)).isZero();
      long first = acquireAndRelease(client, "fenced");
      assertThat(raise(fences, "fenced", 0)).isEqualTo(first);
      long raisedTo = first + AHEAD;
      assertThat(raise(fences, "fenced", raisedTo)).isEqualTo(raisedTo);
      assertThat(raise(fences, "fenced", first + 1)).isEqualTo(raisedTo);
      assertThat(acquireAndRelease(client, "fenced")).isEqualTo(raisedTo + 1);
      // A name that never had a holder gets its counter, and its first holder a token above it.
      long fresh = System.currentTimeMillis() * 1000 + AHEAD;
      assertThat(raise(fences, "fresh", fresh)).isEqualTo(fresh);
      assertThat(acquireAndRelease(client, "fresh")).isEqualTo(fresh + 1);
    }
  }

  @Test
  void aQuarantineEndsByTheDatabaseClock() throws Exception {
    String uri =
        "jdbc:h2:mem:quarantine-"
            + UUID.randomUUID()
            + ";DB_CLOSE_DELAY=-1;latchkey.createSchema=true";
    LatchkeyBackend backend = open(uri);
    try (backend) {
      EpochRecordChecks.aShortQuarantineEnds(backend.fences().orElseThrow());
    }
  }

  private static LatchkeyBackend open(String uri) {
    return new JdbcBackendProvider()
        .open(
            URI.create(uri),
            new BackendContext("fences", Duration.ofSeconds(10), Duration.ofSeconds(30)));
  }

  private static long raise(FenceStore fences, String name, long atLeast) throws Exception {
    return fences.raiseLockFence(name, atLeast).toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static long acquireAndRelease(Latchkey client, String name) throws Exception {
    Lease lease = client.lock(name).acquire(Duration.ofSeconds(5));
    long token = lease.fencingToken();
    lease.release();
    return token;
  }
}
