package io.latchkey.jdbc;

import io.latchkey.servers.SqlTestServer;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.h2.tools.Server;

/**
 * H2's TCP server in a JVM of its own (the H2 jar of this test's class path), on a free loopback
 * port, its databases in files of a throwaway directory: unlike {@link H2TestServer}, it can be
 * crashed for real ({@link #kill()}: SIGKILL, then {@link #restart()} opens the same files) and
 * paused ({@link #pause}: SIGSTOP, SIGCONT).
 *
 * <p>H2 keeps its default settings, so a SIGKILL loses the commits of its last write delay ({@code
 * WRITE_DELAY}, 500 ms by default: H2 writes committed changes to its file from a background thread
 * at most that long after the commit). A database set to {@code WRITE_DELAY} 0 writes every commit
 * to the file before the commit returns, which a killed process cannot lose (an operating-system
 * crash still can: H2 does not sync the file at each commit).
 */
final class H2ProcessServer extends SqlTestServer {
  private final String database;

  private H2ProcessServer(String database) {
    super("h2");
    this.database = database;
  }

  /**
   * @param database the database's name, a file in the server's directory
   * @return a running server; the database is made by the first connection
   * @throws IllegalStateException if the server does not start
   */
  static H2ProcessServer start(String database) {
    return initialiseAndLaunch(new H2ProcessServer(database), "H2");
  }

  private Path data() {
    return directory().resolve("data");
  }

  @Override
  protected void initialise() throws IOException {
    Files.createDirectories(data());
  }

  @Override
  protected List<String> serverCommand() {
    return List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m",
        "-XX:+UseSerialGC",
        "-Dh2.bindAddress=127.0.0.1",
        "-cp",
        h2Jar().toString(),
        Server.class.getName(),
        "-tcp",
        "-tcpPort",
        String.valueOf(port()),
        "-ifNotExists",
        "-baseDir",
        data().toString());
  }

  private static Path h2Jar() {
    try {
      return Path.of(Server.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException("cannot locate the H2 jar", e);
    }
  }

  @Override
  protected String readyLine() {
    return "TCP server running at";
  }

  @Override
  protected String stopSignal() {
    // The JVM's shutdown hook closes the open databases.
    return "TERM";
  }

  /** The database's URL; the server's base directory holds its file. */
  @Override
  public String jdbcUrl() {
    return "jdbc:h2:tcp://127.0.0.1:" + port() + "/" + database;
  }
}
