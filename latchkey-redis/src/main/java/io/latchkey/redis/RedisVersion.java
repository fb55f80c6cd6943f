package io.latchkey.redis;

/**
 * A Redis server's version, as {@code INFO server} reports it.
 *
 * @param major the major version
 * @param minor the minor version
 * @param patch the patch level
 */
record RedisVersion(int major, int minor, int patch) {
  /**
   * The oldest Redis that runs latchkey's scripts: they use {@code SET ... GET} and {@code ZRANGE}
   * forms of Redis 6.2.
   */
  static final RedisVersion MINIMUM = new RedisVersion(6, 2, 0);

  /**
   * @param info the text of {@code INFO server}
   * @return the version in its {@code redis_version} line
   * @throws IllegalStateException if there is none
   */
  static RedisVersion ofInfo(String info) {
    for (String line : info.split("\r?\n", -1)) {
      if (line.startsWith("redis_version:")) {
        String[] parts = line.substring("redis_version:".length()).trim().split("\\.", -1);
        try {
          return new RedisVersion(
              Integer.parseInt(parts[0]),
              parts.length > 1 ? Integer.parseInt(parts[1]) : 0,
              parts.length > 2 ? Integer.parseInt(parts[2]) : 0);
        } catch (NumberFormatException e) {
          throw new IllegalStateException("unreadable Redis version in '" + line + "'", e);
        }
      }
    }
    throw new IllegalStateException("INFO server reported no redis_version");
  }

  /**
   * Reads the version of {@code INFO server} and checks that latchkey's scripts run on it.
   *
   * @param info the text of {@code INFO server}
   * @param server names the server for the message, e.g. {@code 10.0.0.5:6379}
   * @return the version
   * @throws IllegalStateException if the version is older than {@link #MINIMUM}, naming it
   */
  static RedisVersion supported(String info, String server) {
    RedisVersion version = ofInfo(info);
    if (!version.isAtLeast(MINIMUM.major, MINIMUM.minor)) {
      throw new IllegalStateException(
          server
              + " runs Redis "
              + version
              + ", but latchkey needs Redis "
              + MINIMUM.major
              + "."
              + MINIMUM.minor
              + " or later (its scripts use commands of "
              + MINIMUM.major
              + "."
              + MINIMUM.minor
              + ")");
    }
    return version;
  }

  boolean isAtLeast(int wantedMajor, int wantedMinor) {
    return major > wantedMajor || (major == wantedMajor && minor >= wantedMinor);
  }

  /** The dotted form, e.g. {@code 7.0.15}. */
  @Override
  public String toString() {
    return major + "." + minor + "." + patch;
  }
}
