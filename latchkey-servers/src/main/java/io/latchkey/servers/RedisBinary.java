package io.latchkey.servers;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.net.URLConnection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A {@code redis-server} executable that the test servers can launch, with its version.
 *
 * <p>{@link #locate()} looks, in this order, at:
 *
 * <ol>
 *   <li>the system property {@value #PATH_PROPERTY} or, if unset, the environment variable {@value
 *       #PATH_ENVIRONMENT_VARIABLE}: an explicit path that must point to an executable;
 *   <li>{@code redis-server} on the {@code PATH};
 *   <li>the binary for this platform shipped as a resource inside the Maven artifact {@code
 *       com.github.codemonstur:embedded-redis} (a runtime dependency of the testkit), extracted
 *       once per JVM into a temporary directory and made executable.
 * </ol>
 *
 * <p>Sentinels need no separate executable: they run as {@code redis-server <config> --sentinel}.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class RedisBinary {
  /** System property naming an explicit {@code redis-server} executable to use. */
  public static final String PATH_PROPERTY = "latchkey.redis.server";

  /** Environment variable naming an explicit {@code redis-server} executable to use. */
  public static final String PATH_ENVIRONMENT_VARIABLE = "LATCHKEY_REDIS_SERVER";

  private static final String EXECUTABLE_NAME = "redis-server";
  private static final String ARTIFACT_MARKER =
      "META-INF/maven/com.github.codemonstur/embedded-redis/pom.properties";
  private static final Pattern VERSION = Pattern.compile("v=(\\d+)\\.(\\d+)\\.(\\d+)");
  private static final long VERSION_TIMEOUT_SECONDS = 10;

  private static @Nullable RedisBinary located;
  // Guarded by the class: whether fromMavenArtifact() has looked, and what it found.
  private static boolean extractionTried;
  private static @Nullable RedisBinary extracted;

  /** Where a {@link RedisBinary} was found. */
  public enum Source {
    /**
     * Named by {@value RedisBinary#PATH_PROPERTY} or {@value
     * RedisBinary#PATH_ENVIRONMENT_VARIABLE}.
     */
    EXPLICIT,
    /** Found on the {@code PATH}. */
    PATH,
    /** Extracted from the {@code com.github.codemonstur:embedded-redis} artifact. */
    MAVEN_ARTIFACT
  }

  private final Path executable;
  private final Source source;
  private final String version;
  private final int major;
  private final int minor;

  private RedisBinary(Path executable, Source source, String version, int major, int minor) {
    this.executable = executable;
    this.source = source;
    this.version = version;
    this.major = major;
    this.minor = minor;
  }

  /**
   * Returns the {@code redis-server} to use in this JVM, looking it up once (see the class
   * documentation for the order).
   *
   * @return the executable found first
   * @throws IllegalStateException if no usable executable is found, or if the explicit path names
   *     something that is not a working {@code redis-server}; the message says where it looked
   */
  public static synchronized RedisBinary locate() {
    RedisBinary binary = located;
    if (binary == null) {
      binary = find();
      located = binary;
    }
    return binary;
  }

  /**
   * Returns the {@code redis-server} on the {@code PATH}, if there is a working one.
   *
   * @return the executable, or empty if none is on the {@code PATH} or it does not run
   */
  public static Optional<RedisBinary> fromPathEnvironment() {
    String pathVariable = System.getenv("PATH");
    if (pathVariable == null) {
      return Optional.empty();
    }
    for (String directory : pathVariable.split(Pattern.quote(File.pathSeparator), -1)) {
      if (directory.isEmpty()) {
        continue;
      }
      Path candidate;
      try {
        candidate = Paths.get(directory, EXECUTABLE_NAME);
      } catch (RuntimeException e) {
        continue;
      }
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        try {
          return Optional.of(probe(candidate, Source.PATH));
        } catch (IllegalStateException e) {
          // Not a working redis-server (a broken link, say): a later PATH entry may be.
        }
      }
    }
    return Optional.empty();
  }

  /**
   * Returns the {@code redis-server} for this platform shipped inside the {@code
   * com.github.codemonstur:embedded-redis} artifact, extracting it on first use into a temporary
   * directory that is deleted when the JVM exits.
   *
   * @return the extracted executable, or empty if the artifact is not on the class path, ships no
   *     binary for this operating system and architecture, or the binary does not run here (for
   *     example because a shared library it links against is missing)
   */
  public static synchronized Optional<RedisBinary> fromMavenArtifact() {
    if (!extractionTried) {
      extracted = extractFromArtifact().orElse(null);
      extractionTried = true;
    }
    return Optional.ofNullable(extracted);
  }

  /**
   * Returns a binary for an explicit executable.
   *
   * @param executable path to a {@code redis-server} executable
   * @return the binary, with its version read from {@code redis-server --version}
   * @throws IllegalStateException if the path is not an executable file or does not print a Redis
   *     version
   */
  public static RedisBinary of(Path executable) {
    return probe(executable, Source.EXPLICIT);
  }

  /**
   * Returns the path of the executable.
   *
   * @return an absolute path to an executable file
   */
  public Path path() {
    return executable;
  }

  /**
   * Returns where this binary was found.
   *
   * @return the source
   */
  public Source source() {
    return source;
  }

  /**
   * Returns the version that the executable reports, such as {@code 7.0.15}.
   *
   * @return the dotted version
   */
  public String version() {
    return version;
  }

  /**
   * Tells whether this binary is at least the given version.
   *
   * @param major the major version, such as {@code 7}
   * @param minor the minor version, such as {@code 0}
   * @return whether {@code version() >= major.minor}
   */
  public boolean isAtLeast(int major, int minor) {
    return this.major > major || (this.major == major && this.minor >= minor);
  }

  /**
   * Describes the binary for messages.
   *
   * @return path, version and source
   */
  @Override
  public String toString() {
    return "redis-server " + version + " at " + executable + " (" + source + ")";
  }

  private static RedisBinary find() {
    List<String> looked = new ArrayList<>();
    String explicit = System.getProperty(PATH_PROPERTY);
    String origin = "system property " + PATH_PROPERTY;
    if (explicit == null || explicit.isBlank()) {
      explicit = System.getenv(PATH_ENVIRONMENT_VARIABLE);
      origin = "environment variable " + PATH_ENVIRONMENT_VARIABLE;
    }
    if (explicit != null && !explicit.isBlank()) {
      try {
        return probe(Paths.get(explicit), Source.EXPLICIT);
      } catch (RuntimeException e) {
        throw new IllegalStateException(
            origin + " names " + explicit + ", which is not a working redis-server", e);
      }
    }
    looked.add(
        "system property "
            + PATH_PROPERTY
            + " and environment variable "
            + PATH_ENVIRONMENT_VARIABLE
            + ": not set");

    Optional<RedisBinary> onPath = fromPathEnvironment();
    if (onPath.isPresent()) {
      return onPath.get();
    }
    looked.add("PATH: no working " + EXECUTABLE_NAME);

    Optional<RedisBinary> fromArtifact = fromMavenArtifact();
    if (fromArtifact.isPresent()) {
      return fromArtifact.get();
    }
    looked.add(
        "Maven artifact com.github.codemonstur:embedded-redis: not on the class path, no binary"
            + " for "
            + platformSuffix()
                .orElse(System.getProperty("os.name") + "/" + System.getProperty("os.arch"))
            + ", or the binary does not run here");

    throw new IllegalStateException(
        "No redis-server found. Looked at: "
            + String.join("; ", looked)
            + ". Install Redis (Debian: apt-get install redis-server) or set -D"
            + PATH_PROPERTY
            + "=/path/to/redis-server.");
  }

  private static Optional<RedisBinary> extractFromArtifact() {
    Optional<String> suffix = platformSuffix();
    if (suffix.isEmpty()) {
      return Optional.empty();
    }
    ClassLoader loader = RedisBinary.class.getClassLoader();
    Optional<String> resource = findResourceName(loader, suffix.get());
    if (resource.isEmpty()) {
      return Optional.empty();
    }
    try (InputStream in = loader.getResourceAsStream(resource.get())) {
      if (in == null) {
        return Optional.empty();
      }
      Path directory = Files.createTempDirectory("latchkey-redis-binary-");
      directory.toFile().deleteOnExit();
      Path target = directory.resolve(EXECUTABLE_NAME);
      // Registered after the directory so that it is deleted before it (reverse order).
      target.toFile().deleteOnExit();
      Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
      makeExecutable(target);
      return Optional.of(probe(target, Source.MAVEN_ARTIFACT));
    } catch (IOException | IllegalStateException e) {
      return Optional.empty();
    }
  }

  /**
   * Finds the resource holding this platform's binary, named like {@code
   * redis-server-6.2.6-v5-linux-amd64}. The name carries the Redis version, which changes with the
   * artifact's version, so the artifact's jar is listed rather than a fixed name assumed.
   */
  private static Optional<String> findResourceName(ClassLoader loader, String suffix) {
    URL marker = loader.getResource(ARTIFACT_MARKER);
    if (marker == null) {
      return Optional.empty();
    }
    Pattern name = Pattern.compile("redis-server-[0-9][^/]*-" + Pattern.quote(suffix));
    List<String> matches = new ArrayList<>();
    try {
      URLConnection connection = marker.openConnection();
      if (!(connection instanceof JarURLConnection jarConnection)) {
        return Optional.empty();
      }
      jarConnection.setUseCaches(false);
      try (JarFile jar = jarConnection.getJarFile()) {
        for (JarEntry entry : Collections.list(jar.entries())) {
          if (name.matcher(entry.getName()).matches()) {
            matches.add(entry.getName());
          }
        }
      }
    } catch (IOException e) {
      return Optional.empty();
    }
    // Several versions for one platform would be unusual; prefer the last in name order.
    return matches.stream().max(String::compareTo);
  }

  private static Optional<String> platformSuffix() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    String osPart;
    if (os.contains("linux")) {
      osPart = "linux";
    } else if (os.contains("mac") || os.contains("darwin")) {
      osPart = "darwin";
    } else {
      return Optional.empty();
    }
    String archPart =
        switch (arch) {
          case "amd64", "x86_64" -> "amd64";
          case "aarch64", "arm64" -> "arm64";
          case "x86", "i386", "i686" -> "386";
          default -> null;
        };
    if (archPart == null) {
      return Optional.empty();
    }
    return Optional.of(osPart + "-" + archPart);
  }

  private static void makeExecutable(Path file) throws IOException {
    try {
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
    } catch (UnsupportedOperationException e) {
      if (!file.toFile().setExecutable(true, true)) {
        throw new IOException("cannot make " + file + " executable", e);
      }
    }
  }

  /** Runs {@code redis-server --version} to check that the executable works here. */
  private static RedisBinary probe(Path executable, Source source) {
    Path absolute = executable.toAbsolutePath();
    if (!Files.isRegularFile(absolute) || !Files.isExecutable(absolute)) {
      throw new IllegalStateException(absolute + " is not an executable file");
    }
    String output;
    int exitCode;
    try {
      Process process =
          new ProcessBuilder(absolute.toString(), "--version").redirectErrorStream(true).start();
      try {
        process.getOutputStream().close();
        if (!process.waitFor(VERSION_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
          throw new IllegalStateException(
              absolute + " --version did not finish within " + VERSION_TIMEOUT_SECONDS + " s");
        }
        output = new String(process.getInputStream().readAllBytes(), UTF_8).trim();
        exitCode = process.exitValue();
      } finally {
        ServerReaper.killTree(process);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + absolute + " --version", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + absolute + " --version", e);
    }
    Matcher matcher = VERSION.matcher(output);
    if (exitCode != 0 || !matcher.find()) {
      throw new IllegalStateException(
          absolute + " --version exited with " + exitCode + " and printed: " + output);
    }
    int major = Integer.parseInt(matcher.group(1));
    int minor = Integer.parseInt(matcher.group(2));
    String version = major + "." + minor + "." + matcher.group(3);
    return new RedisBinary(absolute, source, version, major, minor);
  }
}
