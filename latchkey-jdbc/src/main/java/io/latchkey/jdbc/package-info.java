/**
 * The relational database backend of latchkey: every primitive on a lease table in PostgreSQL,
 * MariaDB/MySQL or H2, over plain JDBC. Connect with a {@code jdbc:} URI through {@link
 * io.latchkey.Latchkey#connect(String)} (see {@link io.latchkey.jdbc.JdbcBackendProvider} for the
 * URI options), or open it over your own {@link javax.sql.DataSource} with {@link
 * io.latchkey.jdbc.JdbcBackend#builder(javax.sql.DataSource)}. The schema ships as plain SQL files
 * per database ({@code io/latchkey/jdbc/schema/*.sql}); {@link io.latchkey.jdbc.FencedWrites} helps
 * a table of your own refuse writes of stale holders.
 */
@NullMarked
package io.latchkey.jdbc;

import org.jspecify.annotations.NullMarked;
