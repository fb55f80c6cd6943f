package io.latchkey.servers;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A wall clock that a test can move for the server processes it starts, as an NTP step or an
 * operator's {@code date -s} would: libfaketime, preloaded into the process, adds an offset read
 * from a file to every wall-clock reading. The monotonic clock is left alone, as a real step leaves
 * it.
 *
 * <p>{@link #wrap(Path)} gives a launcher for an executable (a shell script that sets the preload
 * and then {@code exec}s it, so the process id is the executable's own); {@link #set(Duration)}
 * moves the clock of every process started through this clock's launchers at once.
 *
 * <p>The library is found, in this order: the system property {@value #PATH_PROPERTY} or the
 * environment variable {@value #PATH_ENVIRONMENT_VARIABLE}; Debian's {@code libfaketime} package
 * where it is installed ({@code /usr/lib/<arch>/faketime/libfaketime.so.1}); a copy fetched earlier
 * into {@code ~/.cache/latchkey/libfaketime}; else the package is fetched there with {@code apt-get
 * download} and unpacked with {@code dpkg-deb} (no root and no installation needed, only Debian's
 * package archive). A machine that has none of these gets an exception that says what to install.
 */
public final class FakedClock {
  /** System property naming the libfaketime shared library to preload. */
  public static final String PATH_PROPERTY = "latchkey.libfaketime";

  /** Environment variable naming the libfaketime shared library to preload. */
  public static final String PATH_ENVIRONMENT_VARIABLE = "LATCHKEY_LIBFAKETIME";

  private static final String LIBRARY = "libfaketime.so.1";
  private static final String PACKAGE = "libfaketime";
  private static final long FETCH_TIMEOUT_SECONDS = 120;

  private static @Nullable Path library;

  private final Path directory;
  private final Path offsetFile;
  private int launchers;

  private FakedClock(Path directory) throws IOException {
    this.directory = directory;
    this.offsetFile = directory.resolve("faked-clock-offset");
    set(Duration.ZERO);
  }

  /**
   * @param directory where the offset file and the launchers are written (a test's temporary
   *     directory)
   * @return a clock at the real time, whose library has been found (or fetched)
   * @throws IllegalStateException if libfaketime can be neither found nor fetched
   */
  public static FakedClock in(Path directory) throws IOException {
    locateLibrary();
    return new FakedClock(directory);
  }

  /**
   * @param executable a server's executable
   * @return a launcher that starts it with this clock, taking the same arguments
   */
  public synchronized Path wrap(Path executable) throws IOException {
    Path launcher = directory.resolve(executable.getFileName() + "-faked-" + launchers++);
    String script =
        "#!/bin/sh\n"
            + "export LD_PRELOAD='"
            + locateLibrary()
            + "'\n"
            + "export FAKETIME_TIMESTAMP_FILE='"
            + offsetFile
            + "'\n"
            // Read the file at every clock call, so that a move takes effect at once.
            + "export FAKETIME_NO_CACHE=1\n"
            // A step of the wall clock leaves CLOCK_MONOTONIC alone.
            + "export DONT_FAKE_MONOTONIC=1\n"
            + "exec '"
            + executable
            + "' \"$@\"\n";
    Files.writeString(launcher, script, UTF_8);
    Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
    return launcher;
  }

  /**
   * Sets the clock of every process started through this clock's launchers to the real time plus
   * {@code offset} (negative: behind), from their next reading of the clock.
   */
  public void set(Duration offset) throws IOException {
    // Written aside and moved into place: a reader never sees half a line.
    Path next = Files.createTempFile(directory, "offset", ".tmp");
    long seconds = offset.getSeconds();
    int nanos = offset.getNano();
    String text =
        nanos == 0
            ? String.format(Locale.ROOT, "%+d", seconds)
            : String.format(Locale.ROOT, "%+.3f", offset.toMillis() / 1000.0);
    Files.writeString(next, text + "\n", UTF_8);
    Files.move(next, offsetFile, StandardCopyOption.ATOMIC_MOVE);
  }

  /**
   * @return a {@code redis-server} that starts under libfaketime: the one shipped in the Maven
   *     artifact (Redis 6.2, whose allocator does not read the clock while libfaketime starts)
   * @throws IllegalStateException if that artifact is not on the class path or its binary does not
   *     run here
   */
  public static RedisBinary redisServer() {
    return RedisBinary.fromMavenArtifact()
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "a faked clock needs the redis-server of the embedded-redis artifact (the"
                        + " system's redis-server 7 hangs under libfaketime), and it is missing or"
                        + " does not run here"));
  }

  /**
   * @return the libfaketime library that launchers preload
   * @throws IllegalStateException if it can be neither found nor fetched
   */
  public static synchronized Path locateLibrary() {
    Path found = library;
    if (found == null) {
      found = find();
      library = found;
    }
    return found;
  }

  private static Path find() {
    String explicit = System.getProperty(PATH_PROPERTY, System.getenv(PATH_ENVIRONMENT_VARIABLE));
    if (explicit != null && !explicit.isBlank()) {
      Path path = Path.of(explicit);
      if (!Files.isReadable(path)) {
        throw new IllegalStateException(
            PATH_PROPERTY
                + " / "
                + PATH_ENVIRONMENT_VARIABLE
                + " names "
                + path
                + ": not readable");
      }
      return path;
    }
    Optional<Path> installed = underLib(Path.of("/usr/lib"));
    if (installed.isPresent()) {
      return installed.get();
    }
    Path cache = Path.of(System.getProperty("user.home"), ".cache", "latchkey", PACKAGE);
    Optional<Path> cached = underLib(cache.resolve("usr").resolve("lib"));
    if (cached.isPresent()) {
      return cached.get();
    }
    String fetchFailure = fetch(cache);
    return underLib(cache.resolve("usr").resolve("lib"))
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "libfaketime is not installed and could not be fetched ("
                        + fetchFailure
                        + "). Install Debian's faketime package (apt-get install faketime), or set "
                        + PATH_PROPERTY
                        + "=/path/to/"
                        + LIBRARY));
  }

  /** Finds {@code <lib>/<arch>/faketime/libfaketime.so.1} or {@code <lib>/faketime/...}. */
  private static Optional<Path> underLib(Path lib) {
    List<Path> candidates = new ArrayList<>();
    candidates.add(lib.resolve("faketime").resolve(LIBRARY));
    if (Files.isDirectory(lib)) {
      try (DirectoryStream<Path> arches = Files.newDirectoryStream(lib)) {
        for (Path arch : arches) {
          candidates.add(arch.resolve("faketime").resolve(LIBRARY));
        }
      } catch (IOException e) {
        return Optional.empty();
      }
    }
    return candidates.stream().filter(Files::isReadable).findFirst();
  }

  /**
   * Fetches and unpacks Debian's package into {@code cache}.
   *
   * @return what went wrong, for the message if the library is still missing
   */
  private static String fetch(Path cache) {
    try {
      Path download = Files.createTempDirectory("latchkey-libfaketime-");
      String fetched = run(download, "apt-get", "download", PACKAGE);
      try (DirectoryStream<Path> debs = Files.newDirectoryStream(download, PACKAGE + "_*.deb")) {
        for (Path deb : debs) {
          Files.createDirectories(cache);
          return run(download, "dpkg-deb", "-x", deb.toString(), cache.toString());
        }
      }
      return "apt-get download " + PACKAGE + " gave no package: " + fetched;
    } catch (IOException e) {
      return e.toString();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted while fetching " + PACKAGE;
    }
  }

  private static String run(Path directory, String... command)
      throws IOException, InterruptedException {
    Process process =
        new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true).start();
    process.getOutputStream().close();
    if (!process.waitFor(FETCH_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      return String.join(" ", command) + " did not finish in " + FETCH_TIMEOUT_SECONDS + " s";
    }
    String output = new String(process.getInputStream().readAllBytes(), UTF_8).trim();
    return String.join(" ", command) + " exited " + process.exitValue() + ": " + output;
  }
}
