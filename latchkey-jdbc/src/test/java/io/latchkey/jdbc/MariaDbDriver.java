package io.latchkey.jdbc;

/**
 * The drivers that reach the tests' MariaDB server: MariaDB's own ({@code jdbc:mariadb:}) and
 * MySQL's (Connector/J, which serves {@code jdbc:mysql:} URLs; no MySQL server can run here, and
 * the driver speaks the same protocol to MariaDB).
 */
enum MariaDbDriver {
  MARIADB("org.mariadb.jdbc."),
  MYSQL("com.mysql.cj.");

  private static final String MARIADB_SCHEME = "jdbc:mariadb:";

  private final String packagePrefix;

  MariaDbDriver(String packagePrefix) {
    this.packagePrefix = packagePrefix;
  }

  /**
   * @param mariaDbUrl a {@code jdbc:mariadb:} URL or latchkey URI
   * @return the same for this driver
   */
  String url(String mariaDbUrl) {
    if (!mariaDbUrl.startsWith(MARIADB_SCHEME)) {
      throw new IllegalArgumentException("not a jdbc:mariadb: URL: " + mariaDbUrl);
    }
    return this == MARIADB
        ? mariaDbUrl
        : "jdbc:mysql:" + mariaDbUrl.substring(MARIADB_SCHEME.length());
  }

  /**
   * @return the prefix of the driver's class names, as stack traces show them
   */
  String packagePrefix() {
    return packagePrefix;
  }
}
