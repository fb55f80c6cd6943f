package io.latchkey.redis;

/**
 * A Redis server's version, as {@code INFO server} reports it.
 *
 * @param major the major version
 * @param minor the minor version
 */
record RedisVersion(int major, int minor) {
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
              Integer.parseInt(parts[0]), parts.length > 1 ? Integer.parseInt(parts[1]) : 0);
        } catch (NumberFormatException e) {
          throw new IllegalStateException("unreadable Redis version in '" + line + "'", e);
        }
      }
    }
    throw new IllegalStateException("INFO server reported no redis_version");
  }

  boolean isAtLeast(int wantedMajor, int wantedMinor) {
    return major > wantedMajor || (major == wantedMajor && minor >= wantedMinor);
  }
}
