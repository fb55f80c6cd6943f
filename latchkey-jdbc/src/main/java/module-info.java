/**
 * latchkey-jdbc: the relational-database backend (PostgreSQL, MariaDB/MySQL, H2; table and advisory
 * modes), found by {@link java.util.ServiceLoader} as the provider of the {@code jdbc:} scheme, or
 * built over an application's {@link javax.sql.DataSource} with {@code JdbcBackend.builder}.
 *
 * <p>The JDBC drivers are not required: {@link java.sql.DriverManager} finds whichever the
 * application puts on the module or class path.
 */
module io.latchkey.jdbc {
  // JdbcBackend implements SPI types of core and takes a DataSource: readers need both.
  requires transitive io.latchkey;
  requires transitive java.sql;
  requires org.slf4j;
  requires static org.jspecify;

  exports io.latchkey.jdbc;

  provides io.latchkey.spi.BackendProvider with
      io.latchkey.jdbc.JdbcBackendProvider;
}
